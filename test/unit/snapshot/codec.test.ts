import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ApiFailure } from "@/lib/api/envelope";
import { checkShape, checkedBundle, decodeSnapshot, encodeSnapshot, readStoredBundle } from "@/lib/snapshot/format/codec";
import { heldPart, snapshotPanel, info } from "@/lib/snapshot/lookup";
import { SNAPSHOT_FORMAT, type Snapshot } from "@/lib/snapshot/format/schema";
import type { PanelData } from "@/lib/panels/run-panel";

const START = Date.parse("2026-09-11T12:00:00Z");
const END = Date.parse("2026-09-11T16:00:00Z");

function sample(): Snapshot {
  const result = {
    data: {
      panel: "writes-by-verb",
      title: "Writes",
      unit: "writes/s",
      query: "q",
      queries: [{ promql: "q" }],
      stepSeconds: 60,
      startMs: START,
      endMs: END,
      series: [
        {
          labels: { verb: "PUT" },
          points: [
            [START, 0.5],
            [START + 60_000, null],
          ] as [number, number | null][],
        },
      ],
    },
    warnings: [],
    infos: ["an info"],
  };
  return {
    format: SNAPSHOT_FORMAT,
    version: 1,
    title: "t",
    takenAtMs: END,
    source: "prometheus",
    views: ["write-load"],
    ranges: [{ startMs: START, endMs: END }],
    apiservers: [{ job: "milo-apiserver", role: "project" }],
    panels: [{ panel: "writes-by-verb", startMs: START, endMs: END, apiserver: "milo-apiserver", resource: "connectors.networking.datumapis.com", result }],
    markers: [{ timeMs: START + 1, label: "v1", detail: "release", kind: "release" }],
    objectWrites: {
      objects: [{ cluster: "c", apiVersion: "v1", kind: "Lease", namespace: "n", name: "x", initial: null }],
      writes: [{ t: START + 5, o: 0, verb: "POST", by: "m", cls: "create", changes: [] }],
    },
  };
}

function rejection(bytes: Buffer, maxBytes = 1 << 20): ApiFailure {
  try {
    decodeSnapshot(bytes, maxBytes);
  } catch (error) {
    if (ApiFailure.is(error)) return error;
    throw error;
  }
  throw new Error("accepted a bad bundle");
}

const gz = (value: unknown) => gzipSync(Buffer.from(JSON.stringify(value)));

describe("snapshot bundles", () => {
  it("round-trips through gzip, and plain JSON is accepted too", () => {
    const snapshot = sample();
    expect(decodeSnapshot(encodeSnapshot(snapshot), 1 << 20)).toEqual(snapshot);
    expect(decodeSnapshot(Buffer.from(JSON.stringify(snapshot)), 1 << 20)).toEqual(snapshot);
  });

  it("keeps every field a panel answer can carry", () => {
    // Required<…>: a field added to panel answers must be added here, and to the bundle's schema, or it is dropped from snapshots.
    const data: Required<PanelData> = {
      ...(sample().panels[0].result.data as PanelData),
      estimate: "an estimate",
      profile: { id: "envoy-gateway", title: "Envoy Gateway", reason: "its metrics are scraped" },
      thresholds: [{ value: 1, label: "saturated" }],
      nothingToDraw: true,
    };
    const snapshot = sample();
    snapshot.panels[0].result = { ...snapshot.panels[0].result, data };
    expect(decodeSnapshot(encodeSnapshot(snapshot), 1 << 20).panels[0].result.data).toEqual(data);
  });

  it("rejects each kind of bad bundle with a message saying what is wrong", () => {
    const cases: [Buffer, RegExp, number?][] = [
      [Buffer.from([0x1f, 0x8b, 1, 2, 3]), /not a valid gzip file/],
      [Buffer.from("hello"), /not JSON/],
      [gz({ format: "grafana" }), /not a Churnscope snapshot/],
      [gz({ ...sample(), version: 2 }), /version 2, made by a newer Churnscope/],
      [gz({ ...sample(), version: "1" }), /no version number/],
      [gz({ ...sample(), ranges: [] }), /ranges: /],
      [gz({ ...sample(), panels: [{ ...sample().panels[0], result: { data: {}, warnings: [], infos: [] } }] }), /panels\.0\.result\.data\.panel/],
      [
        gz({ ...sample(), objectWrites: { ...sample().objectWrites!, writes: [{ t: 1, o: 7, verb: "PUT", by: "m", cls: "routed", changes: [] }] } }),
        /writes\.0 names object 7, but there are 1/,
      ],
      [gz({ ...sample(), ranges: [{ startMs: END, endMs: START }] }), /ranges\.0 ends before it starts/],
      ...[[START, "1"], [null, 1], [-1, 1], [START + 0.5, 1], [START, 1, 2], [START]].map((point): [Buffer, RegExp] => [
        gz({
          ...sample(),
          panels: [
            {
              ...sample().panels[0],
              result: { ...sample().panels[0].result, data: { ...sample().panels[0].result.data, series: [{ labels: {}, points: [point] }] } },
            },
          ],
        }),
        /panels\.0\.result\.data\.series\.0\.points: each point is \[epoch ms, a finite number or null\]/,
      ]),
      [
        gz({
          ...sample(),
          auditRequests: {
            clients: [{ user: "u", userAgent: "a/v1" }],
            targets: [{ cluster: "c", group: "", resource: "leases", namespace: "n", name: "x" }],
            requests: [
              { t: 1, c: 0, x: 0, verb: "patch", code: 200 },
              { t: 2, c: 1, x: 0, verb: "patch", code: 200 },
            ],
          },
        }),
        /auditRequests\.requests\.1 names a client or target it does not list/,
      ],
      [
        gz({ ...sample(), auditRequests: { clients: [], targets: [], requests: [{ t: 1, c: 0, x: 0, verb: "patch", code: 1000 }] } }),
        /auditRequests\.requests\.0\.code: expected an HTTP status code/,
      ],
      [
        gz({ ...sample(), auditRequests: { clients: [], targets: [], requests: [{ t: 1, c: 0, x: 0, verb: "patch", code: 200, ev: "guess" }] } }),
        /auditRequests\.requests\.0\.ev: expected one of body, /,
      ],
      [gz({ ...sample(), auditRequests: { clients: [], targets: [], requests: [7] } }), /auditRequests\.requests\.0: expected an object/],
      ...[
        [{ cls: "moved" }, /objectWrites\.writes\.0\.cls: expected one of create, delete/],
        [{ t: -1 }, /objectWrites\.writes\.0\.t: expected epoch milliseconds/],
        [{ sub: 5 }, /objectWrites\.writes\.0\.sub: expected a string/],
        [{ changes: [{ path: "a" }, { before: 1 }] }, /objectWrites\.writes\.0\.changes\.1\.path: expected a string/],
        [{ changes: "none" }, /objectWrites\.writes\.0\.changes: expected an array/],
      ].map(([change, message]): [Buffer, RegExp] => [
        gz({ ...sample(), objectWrites: { ...sample().objectWrites!, writes: [{ ...sample().objectWrites!.writes[0], ...(change as object) }] } }),
        message as RegExp,
      ]),
    ];
    for (const [bytes, message] of cases) {
      const failure = rejection(bytes);
      expect(failure.httpStatus, String(message)).toBe(400);
      expect(failure.message).toMatch(message);
    }
  });

  it("counts the arrays and objects outside strings only, whatever the strings' escapes", () => {
    const inStrings = JSON.stringify({ s: `${"[".repeat(20_000)}\\"${"{".repeat(20_000)}`, t: "ends in a backslash \\", u: '\\"[' });
    expect(() => checkShape(inStrings)).not.toThrow();
    // After a string ending in an escaped backslash, the arrays are counted: 20,001 past the 10,000 allowed.
    const outside = JSON.stringify({ t: "ends in a backslash \\", a: Array.from({ length: 20_000 }, () => []) });
    expect(() => checkShape(outside)).toThrow(/holds more than 10,000 arrays and objects/);
  });

  it("refuses oversized uploads and bundles that unpack to more than 8× the limit", () => {
    const big = rejection(Buffer.alloc(2048, 1), 1024);
    expect(big.httpStatus).toBe(413);
    expect(big.message).toMatch(/at most 1 KiB/);
    const bomb = gzipSync(Buffer.alloc(64 * 1024, 32));
    expect(bomb.length).toBeLessThan(1024);
    const exploded = rejection(bomb, 1024);
    expect(exploded.httpStatus).toBe(413);
    expect(exploded.message).toMatch(/unpacks to more than/);
  });

  it("reads a bundle it stored back as it was packed, within the same bounds", () => {
    const snapshot = sample();
    expect(readStoredBundle(encodeSnapshot(snapshot), 1 << 20)).toEqual(snapshot);
    const bomb = gzipSync(Buffer.alloc(64 * 1024, 32));
    expect(() => readStoredBundle(bomb, 1024)).toThrow(/unpacks to more than/);
    expect(() => readStoredBundle(Buffer.alloc(2048, 1), 1024)).toThrow(/at most 1 KiB/);
  });
});

describe("an upload as it is stored", () => {
  it("keeps a packed bundle as it came, named by the bytes stored: the same file twice is one snapshot", () => {
    const made = encodeSnapshot(sample());
    const reordered = gz(Object.fromEntries(Object.entries(sample()).reverse()));
    const [a, again, b] = [checkedBundle(made, 1 << 20), checkedBundle(Buffer.from(made), 1 << 20), checkedBundle(reordered, 1 << 20)];
    expect(a.encoded.equals(made)).toBe(true);
    expect(b.encoded.equals(reordered)).toBe(true);
    expect(again.id).toBe(a.id);
    expect(a.id).toBe(createHash("sha256").update(made).digest("hex").slice(0, 16));
    expect(b.id).toBe(createHash("sha256").update(reordered).digest("hex").slice(0, 16));
    // Plain JSON is packed as it came, the same each time.
    const text = JSON.stringify(sample(), null, 1);
    const plain = checkedBundle(Buffer.from(text), 1 << 20);
    expect(gunzipSync(plain.encoded).toString()).toBe(text);
    expect(checkedBundle(Buffer.from(text), 1 << 20).id).toBe(plain.id);
  });

  it("refuses a field the format does not know, at any depth, naming it: nothing sent is silently left out", () => {
    const write = sample().objectWrites!.writes[0];
    const cases: [object, RegExp][] = [
      [{ ...sample(), secret: "x" }, /\(top level\): Unrecognized key: "secret"/],
      [{ ...sample(), markers: [{ ...sample().markers[0], colour: "red" }] }, /markers\.0: Unrecognized key: "colour"/],
      [
        { ...sample(), objectWrites: { ...sample().objectWrites!, writes: [{ colour: "red", ...write }] } },
        /objectWrites\.writes\.0: Unrecognized key: "colour"/,
      ],
      [
        { ...sample(), objectWrites: { ...sample().objectWrites!, writes: [{ ...write, changes: [{ path: "a", after: 1, colour: "red" }] }] } },
        /objectWrites\.writes\.0\.changes\.0: Unrecognized key: "colour"/,
      ],
    ];
    for (const [bundle, message] of cases) expect(rejection(gz(bundle)).message).toMatch(message);
  });
});

describe("answering from a snapshot", () => {
  it("answers exactly the stored request and names what it holds otherwise", () => {
    const snapshot = heldPart(sample());
    const call = { panel: "writes-by-verb", startMs: START, endMs: END, apiserver: "milo-apiserver", resource: "connectors.networking.datumapis.com" };
    expect(snapshotPanel(snapshot, call)).toEqual(snapshot.panels[0].result);
    // A bare plural matches any group, as in a query to Prometheus; the snapshot holds one connectors resource.
    expect(snapshotPanel(snapshot, { ...call, resource: "connectors" })).toEqual(snapshot.panels[0].result);
    expect(() => snapshotPanel(snapshot, { ...call, resource: "connector" })).toThrow(/no writes-by-verb data for connector;/);
    const other = (() => {
      try {
        snapshotPanel(snapshot, { ...call, resource: "leases.coordination.k8s.io" });
      } catch (error) {
        return error as ApiFailure;
      }
    })();
    expect(other?.httpStatus).toBe(404);
    expect(other?.errorType).toBe("not_in_snapshot");
    expect(other?.message).toMatch(/no writes-by-verb data for leases\.coordination\.k8s\.io; it holds: connectors\.networking\.datumapis\.com/);
    expect(() => snapshotPanel(snapshot, { ...call, startMs: START - 1 })).toThrow(/holds the ranges/);
    expect(info(snapshot, "abc").resources).toEqual({ "milo-apiserver": ["connectors.networking.datumapis.com"] });
  });
  it("zooms inside a held range at the held step, and says a total cannot be cut", () => {
    const bundle = sample();
    const points = Array.from({ length: 240 }, (_, i) => [START + i * 60_000, i] as [number, number | null]);
    bundle.panels[0].result.data.series[0].points = points;
    const totals = structuredClone(bundle.panels[0]);
    totals.panel = "write-totals";
    totals.resource = undefined;
    totals.result.data.stepSeconds = (END - START) / 1000;
    bundle.panels.push(totals);
    const snapshot = heldPart(bundle);
    const call = { panel: "writes-by-verb", startMs: START + 30 * 60_000, endMs: START + 90 * 60_000, apiserver: "milo-apiserver", resource: "connectors" };
    const zoomed = snapshotPanel(snapshot, call);
    expect(zoomed.data.startMs).toBe(call.startMs);
    expect(zoomed.data.endMs).toBe(call.endMs);
    expect(zoomed.data.stepSeconds).toBe(60);
    expect(zoomed.data.series[0].points).toEqual(points.filter(([t]) => t >= call.startMs && t <= call.endMs));
    expect(zoomed.data.series[0].points).toHaveLength(61);
    expect(zoomed.infos).toEqual(snapshot.panels[0].result.infos);
    expect(() => snapshotPanel(snapshot, { ...call, panel: "write-totals", resource: undefined })).toThrow(
      /holds these totals for .* only, not for a part of it/,
    );
    // Past the held range is still outside it.
    expect(() => snapshotPanel(snapshot, { ...call, endMs: END + 60_000 })).toThrow(/holds the ranges/);
  });
  it("answers a comparison from a held one: the other way round, or per a whole multiple of its window, gaps kept", () => {
    const bundle = sample();
    const dayStart = Date.parse("2026-09-11T00:00:00Z");
    const dayEnd = dayStart + 86_400_000;
    const H3 = 3 * 3_600_000;
    const ends = Array.from({ length: 8 }, (_, i) => dayStart + (i + 1) * H3);
    const a = ends.map((t, i) => [t, 10 * (i + 1)] as [number, number | null]);
    const b = ends.map((t, i) => [t, i === 5 ? null : i + 1] as [number, number | null]);
    bundle.ranges = [{ startMs: dayStart, endMs: dayEnd }];
    bundle.panels = [
      {
        panel: "compare",
        startMs: dayStart,
        endMs: dayEnd,
        args: { a: "x_total", b: "y_total", window: "3h" },
        result: {
          data: {
            ...bundle.panels[0].result.data,
            panel: "compare",
            stepSeconds: 10_800,
            startMs: dayStart,
            endMs: dayEnd,
            series: [
              { labels: { series: "A", selector: "x_total" }, points: a },
              { labels: { series: "B", selector: "y_total" }, points: b },
            ],
          },
          warnings: [],
          infos: [],
        },
      },
    ];
    const snapshot = heldPart(bundle);
    const call = (args: Record<string, string>) => ({ panel: "compare", startMs: dayStart, endMs: dayEnd, args });
    const sixHours = snapshotPanel(snapshot, call({ a: "x_total", b: "y_total", window: "6h" }));
    expect(sixHours.data.stepSeconds).toBe(21_600);
    expect(sixHours.data.series[0].points).toEqual([0, 1, 2, 3].map((k) => [dayStart + (k + 1) * 2 * H3, a[2 * k][1]! + a[2 * k + 1][1]!]));
    // B's window 6 (index 5) is not held: the 6 h window holding it is a gap, the others sums.
    expect(sixHours.data.series[1].points.map(([, v]) => v)).toEqual([1 + 2, 3 + 4, null, 7 + 8]);
    expect(sixHours.infos.at(-1)).toMatch(/Counted from the snapshot's 3h windows, 2 to each 6h window/);
    const swapped = snapshotPanel(snapshot, call({ a: "y_total", b: "x_total", window: "3h" }));
    expect(swapped.data.series.map((s) => [s.labels.series, s.labels.selector, s.points])).toEqual([
      ["A", "y_total", b],
      ["B", "x_total", a],
    ]);
    expect(() => snapshotPanel(snapshot, call({ a: "x_total", b: "y_total", window: "4h" }))).toThrow(
      /only these comparisons: x_total vs y_total per 3h \(each also the other way round/,
    );
    expect(() => snapshotPanel(snapshot, call({ a: "x_total", b: "z_total", window: "3h" }))).toThrow(/only these comparisons: x_total vs y_total per 3h/);
  });
});
