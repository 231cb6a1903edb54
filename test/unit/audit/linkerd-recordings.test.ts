/**
 * The real Linkerd policy controller before and after its fix for linkerd2 #12104, as a real kube-apiserver logged it
 * (../shared/recordings/linkerd-12104): every echo, restamped and frozen clock and clock-only write the store counts,
 * per route and per writer, equals an independent reading of the raw log (test/helpers/count_clocks.py); after the
 * fix, none. On both engines.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ingestFile } from "@/lib/audit/files";
import { AuditIngester } from "@/lib/audit/ingest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { ROOT } from "../../helpers/root";
import { sharedData } from "../../helpers/shared-data";
import { storeEngines } from "../../helpers/store-engines";

const recording = (name: string) => sharedData(join("recordings", "linkerd-12104", name));
const CONTROLLER = "system:serviceaccount:linkerd:linkerd-destination";
const ALL = { fromMs: 0, toMs: Date.parse("2030-01-01T00:00:00Z") };

interface Independent {
  writes: Record<string, { echo: number; clockOnly: number; made: number }>;
  clocks: Record<string, [number, number]>;
  objects: Record<string, { echo: number; clockOnly: number; frozen: number; restamped: number }>;
}

function independent(file: string): Independent {
  const run = spawnSync("python3", [join(ROOT, "test", "helpers", "count_clocks.py"), "--resource", "httproutes.policy.linkerd.io", file], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error) throw new Error(`this test needs python3 on the PATH to read the recordings independently: ${run.error.message}`);
  if (run.status !== 0) throw new Error(`count_clocks.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Independent;
}

describe.each(storeEngines())("the Linkerd policy controller's recordings on %s", (_name, engine) => {
  async function ingested(file: string) {
    const store = await engine.writeStore();
    const ingester = new AuditIngester(store, "kind", DEFAULT_PROFILES);
    await ingestFile(ingester, file);
    await ingester.flush();
    const scope = { ...ALL, group: "policy.linkerd.io", kind: "HTTPRoute" };
    const { counts } = await store.traitCounts(scope);
    const { answer, cut } = await store.traits(scope);
    expect(cut).toBe(false);
    return { counts, keys: await store.database.keysOf(counts.map((c) => c.objectId)), answer };
  }

  it("before the fix: every echo, restamped and frozen clock and clock-only write, per route and per writer, as the raw log says", async () => {
    const file = recording("before-fix.audit.log.gz");
    const truth = independent(file);
    const { counts, keys, answer } = await ingested(file);
    // The log really shows the bug: most status PATCHes are echoes or move only the clocks.
    expect(truth.writes[CONTROLLER].echo).toBeGreaterThan(100);
    expect(truth.writes[CONTROLLER].clockOnly).toBeGreaterThan(100);

    const faults = Object.entries(truth.clocks)
      .filter(([id]) => !id.includes("|moved|"))
      .map(([id, [writes, objects]]) => {
        const [kind, conditionType, finding, writer] = id.split("|");
        return { kind, conditionType, finding, writer, writes, objects };
      });
    expect(
      answer.clocks.map(({ kind, conditionType, finding, writer, writes, objects }) => ({ kind, conditionType, finding, writer, writes, objects })),
    ).toEqual(expect.arrayContaining(faults));
    expect(answer.clocks).toHaveLength(faults.length);
    for (const row of answer.clocks) expect(row.example?.key.kind).toBe("HTTPRoute");

    const controller = answer.writers.find((w) => w.writer === CONTROLLER);
    expect(controller).toMatchObject({ echoes: truth.writes[CONTROLLER].echo, clockOnly: truth.writes[CONTROLLER].clockOnly, ignoredOnly: 0 });
    // Linkerd's rule leaves clocks out of the comparison: both kinds of wasted write are no-ops.
    expect(controller?.noop).toBe(truth.writes[CONTROLLER].echo + truth.writes[CONTROLLER].clockOnly);

    // Route by route.
    const perRoute: Record<string, { echo: number; clockOnly: number; frozen: number; restamped: number }> = {};
    for (const c of counts) {
      const key = keys.get(c.objectId)!;
      const route = (perRoute[`${key.namespace}/${key.name}`] ??= { echo: 0, clockOnly: 0, frozen: 0, restamped: 0 });
      if (c.traits.includes('"e"')) route.echo += c.writes;
      if (c.traits.includes('"="')) route.clockOnly += c.writes;
      if (c.traits.includes('"fAccepted"')) route.frozen += c.writes;
      if (c.traits.includes('"rAccepted"')) route.restamped += c.writes;
    }
    expect(perRoute).toEqual(truth.objects);
    expect(answer.sentences.join(" ")).toContain("Accepted's lastTransitionTime moved");
  });

  it("after the fix: one status write per route, no echo, no clock fault", async () => {
    const file = recording("after-fix.audit.log.gz");
    const truth = independent(file);
    expect(truth.writes[CONTROLLER]).toEqual({ echo: 0, clockOnly: 0, made: 20 });
    expect(truth.clocks).toEqual({});
    const { answer } = await ingested(file);
    expect(answer.clocks).toEqual([]);
    expect(answer.writers).toEqual([]);
    expect(answer.sentences).toEqual([]);
  });
});
