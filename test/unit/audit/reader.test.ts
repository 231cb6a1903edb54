/** The file reader: lines across read chunks, multi-byte characters, 200 kB lines, gzip, a corrupt .gz, and the reader thread. */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { AuditRequest } from "@/lib/audit/event";
import { AuditReader, MAX_LINE_BYTES, readFileLines } from "@/lib/audit/reader";
import { auditEvent } from "../../helpers/audit-log";

const T = Date.UTC(2026, 10, 29, 8, 0, 0);
const dir = mkdtempSync(join(tmpdir(), "churnscope-reader-"));

/** About 3 MiB (several 1 MiB read chunks): writes by users with multi-byte names, reads, and every 50th write 200 kB long. */
function log(): { lines: string[]; users: string[] } {
  const lines: string[] = [];
  const users: string[] = [];
  for (let i = 0; i < 900; i++) {
    const user = `ünïcødé-✓-${i}`;
    const big = i % 50 === 0 ? { data: { blob: "ß".repeat(100_000) } } : {};
    users.push(user);
    lines.push(
      JSON.stringify(
        auditEvent({
          auditID: `r-${i}`,
          verb: "update",
          resource: "configmaps",
          namespace: "ns",
          name: `c${i}`,
          user,
          receivedMs: T + i,
          responseObject: { kind: "ConfigMap", metadata: { name: `c${i}`, resourceVersion: String(i) }, ...big },
        }),
      ),
    );
    lines.push(
      JSON.stringify(
        auditEvent({
          verb: "get",
          resource: "configmaps",
          namespace: "ns",
          name: `c${i}`,
          receivedMs: T + i,
          responseObject: { kind: "ConfigMap", data: { x: "é".repeat(1_000) } },
        }),
      ),
    );
  }
  return { lines, users };
}

async function read(path: string) {
  const requests: AuditRequest[] = [];
  const reader = new AuditReader((r) => requests.push(r));
  await readFileLines(reader, path, "test");
  return { requests, reader };
}

describe("readFileLines", () => {
  const { lines, users } = log();

  it("reads every line across chunk boundaries with its characters intact, plain and gzipped", async () => {
    const plain = join(dir, "audit.log");
    writeFileSync(plain, lines.join("\n") + "\n");
    for (const path of [plain, join(dir, "audit.log.gz")]) {
      if (path.endsWith(".gz")) writeFileSync(path, gzipSync(lines.join("\n")));
      const { requests, reader } = await read(path);
      expect(requests.map((r) => r.user)).toEqual(users);
      expect(reader.counts).toMatchObject({ lines: lines.length, notWrites: users.length, malformed: 0 });
      expect((requests[50].response?.object as { data: { blob: string } }).data.blob).toBe("ß".repeat(100_000));
    }
  });

  it("a corrupt .gz stops at the damage with a problem reported, keeping what came before", async () => {
    const whole = gzipSync(lines.join("\n"));
    const path = join(dir, "cut.log.gz");
    writeFileSync(path, whole.subarray(0, Math.floor(whole.length / 2)));
    const { requests, reader } = await read(path);
    expect(requests.length).toBeGreaterThan(100);
    expect(requests.length).toBeLessThan(users.length);
    expect(requests.map((r) => r.user)).toEqual(users.slice(0, requests.length));
    expect(reader.problems.at(-1)?.message).toMatch(/^reading stopped: /);
  });

  it("drops a line or a JSON value longer than 16 MiB as malformed and reads on after it", async () => {
    const path = join(dir, "long.log");
    const long = "a".repeat(MAX_LINE_BYTES + 3 * 1_048_576);
    writeFileSync(path, `{"x":"${long}"}\n${lines[0]}\n${long}\n${lines[0].replace('"r-0"', '"r-0b"')}\n`);
    const { requests, reader } = await read(path);
    expect(requests.map((r) => r.user)).toEqual([users[0], users[0]]);
    expect(reader.counts).toMatchObject({ lines: 4, malformed: 2 });
    expect(reader.problems).toEqual([
      { source: "test", line: 1, message: "a JSON value longer than 16 MiB" },
      { source: "test", line: 3, message: "a line longer than 16 MiB" },
    ]);
  });

  it("reads Windows line ends and blank lines", async () => {
    const path = join(dir, "crlf.log");
    // Windows line ends and a blank line are fine too.
    writeFileSync(path, `${lines[0]}\r\n\r\n${lines[1]}\r\n`);
    const { requests, reader } = await read(path);
    expect(requests).toHaveLength(1);
    expect(reader.counts).toMatchObject({ lines: 3, blank: 1, notWrites: 1, malformed: 0 });
  });
});

describe("container logs", () => {
  const { lines, users } = log();
  const at = (i: number) => `2026-11-29T08:00:${String(i % 60).padStart(2, "0")}.123456789Z`;
  /** A line as containerd writes it: cut into `P` parts of `size` bytes (cut anywhere, mid-character too) ended by an `F` part. */
  function cut(line: string, stream: "stdout" | "stderr", size: number, i: number): string[] {
    const bytes = Buffer.from(line);
    const out: string[] = [];
    for (let at0 = 0; at0 + size < bytes.length; at0 += size) out.push(`${at(i)} ${stream} P `, bytes.subarray(at0, at0 + size).toString("latin1"), "\n");
    out.push(`${at(i)} ${stream} F `, bytes.subarray(Math.floor((bytes.length - 1) / size) * size).toString("latin1"), "\n");
    return out;
  }
  const write = (name: string, pieces: string[]) => {
    const path = join(dir, name);
    writeFileSync(path, Buffer.concat(pieces.map((p) => Buffer.from(p, "latin1"))));
    return path;
  };

  it("joins each stream's parts into the line they were cut from, with stderr lines in between, and reads klog lines as foreign", async () => {
    const pieces: string[] = [];
    let physical = 0;
    let klog = 0;
    lines.forEach((line, i) => {
      const parts = cut(line, "stdout", 16_384, i);
      if (i % 7 === 0 && parts.length > 3) {
        // The API server's own logging on stderr, between two parts of an audit line on stdout.
        pieces.push(...parts.slice(0, 3), `${at(i)} stderr F I1129 08:00:00.000000 1 handler.go:286] Adding GroupVersion v1\n`, ...parts.slice(3));
        physical += 1;
        klog += 1;
      } else pieces.push(...parts);
      physical += parts.length / 3;
    });
    pieces.push(`${at(0)} stdout F \n`);
    const { requests, reader } = await read(write("container.log", pieces));
    expect(requests.map((r) => r.user)).toEqual(users);
    expect((requests[50].response?.object as { data: { blob: string } }).data.blob).toBe("ß".repeat(100_000));
    expect(reader.counts).toMatchObject({ lines: physical + 1, events: lines.length, notWrites: users.length, foreign: klog, blank: 1, malformed: 0 });
    expect(physical).toBeGreaterThan(lines.length + 100);
    expect(klog).toBeGreaterThan(0);
  });

  it("reads lines that start with their time, as a CloudWatch Logs export writes each event; other timed output is foreign", async () => {
    const pieces = [
      `2026-11-29T08:00:00.000Z ${lines[0]}\n`,
      `2026-11-29T08:00:01.5+01:00 ${lines[2]}\n`,
      "2026-11-29T08:00:02Z I1129 handler.go:286] ready\n",
    ];
    const path = join(dir, "exported.log");
    writeFileSync(path, pieces.join(""));
    const { requests, reader } = await read(path);
    expect(requests.map((r) => r.user)).toEqual([users[0], users[1]]);
    expect(reader.counts).toMatchObject({ lines: 3, events: 2, foreign: 1, malformed: 0 });
  });

  it("reads a shipper's record that starts like Docker's json-file line but adds fields of its own as an envelope, whole", async () => {
    const record = (log: string) => JSON.stringify({ log, stream: "stdout", time: "2026-11-29T08:00:00Z", kubernetes: { pod_name: "kube-apiserver-0" } });
    const path = join(dir, "shipped.log");
    // Its log has no line end, as shippers often strip it: still one whole line, not a part.
    writeFileSync(path, [record(lines[0]), record("I1129 handler.go:286] ready\n")].join("\n") + "\n");
    const { requests, reader } = await read(path);
    expect(requests.map((r) => r.user)).toEqual([users[0]]);
    expect(reader.counts).toMatchObject({ lines: 2, events: 1, foreign: 1, malformed: 0 });
  });

  it("a line whose final part never came is malformed; one longer than 16 MiB in parts is malformed and reading goes on", async () => {
    const huge = `{"x":"${"a".repeat(MAX_LINE_BYTES)}"}`;
    const whole = [...cut(huge, "stdout", 1_048_576, 0), ...cut(lines[0], "stdout", 100, 1)];
    const pieces = [...whole, ...cut(lines[2], "stdout", 100, 2).slice(0, -3)];
    const { requests, reader } = await read(write("cut.log", pieces));
    expect(requests.map((r) => r.user)).toEqual([users[0]]);
    expect(reader.counts).toMatchObject({ lines: pieces.length / 3, malformed: 2, events: 1 });
    expect(reader.problems.map((p) => [p.line, p.message])).toEqual([
      [1, "a container log line longer than 16 MiB"],
      [whole.length / 3 + 1, "a container log line cut off: its parts end without a final (F) part"],
    ]);
  });
});

describe("JSON values that are not one per line", () => {
  const { lines, users } = log();
  const events = lines.map((line) => JSON.parse(line) as Record<string, unknown>);

  it("reads events printed over many lines (jq, JSON.stringify with indent), and an array of them, with their characters intact", async () => {
    const path = join(dir, "pretty.json");
    writeFileSync(path, events.map((e) => JSON.stringify(e, null, 2)).join("\n") + "\n" + JSON.stringify(events.slice(0, 4), null, "\t") + "\n");
    const { requests, reader } = await read(path);
    expect(requests.map((r) => r.user)).toEqual([...users, users[0], users[1]]);
    expect((requests[50].response?.object as { data: { blob: string } }).data.blob).toBe("ß".repeat(100_000));
    const physical = readFileSync(path, "utf8").split("\n").length - 1;
    expect(reader.counts).toMatchObject({ lines: physical, events: lines.length + 4, notWrites: users.length + 2, malformed: 0, foreign: 0, blank: 0 });
  });

  it("a value cut off where the next one starts at a line's start is malformed, and so is one the file ends inside; the rest is read", async () => {
    const pretty = (i: number) => JSON.stringify(events[i], null, 2).split("\n");
    const cut = pretty(0).slice(0, 6);
    const path = join(dir, "cut.json");
    writeFileSync(path, [...cut, ...pretty(2), ...pretty(4).slice(0, -1)].join("\n") + "\n");
    const { requests, reader } = await read(path);
    expect(requests.map((r) => r.user)).toEqual([users[1]]);
    expect(reader.counts).toMatchObject({ malformed: 2, events: 1, lines: cut.length + pretty(2).length + pretty(4).length - 1 });
    expect(reader.problems.map((p) => [p.line, p.message])).toEqual([
      [1, `a JSON value that never ends: cut off before line ${cut.length + 1}`],
      [cut.length + pretty(2).length + 1, "a JSON value that never ends: cut off at the end of the file"],
    ]);
  });

  it("reads events run together with nothing between them, and says so where text that is not a value follows one", async () => {
    const path = join(dir, "together.json");
    // A bracketed line that is not JSON is one malformed line, whatever follows on it.
    writeFileSync(path, `${lines[1]}${lines[0]}${lines[2]}\n${lines[4]} trailing\n[INFO] ready [x\n${lines[6]}\n`);
    const { requests, reader } = await read(path);
    expect(requests.map((r) => r.user)).toEqual([users[0], users[1], users[2], users[3]]);
    expect(reader.counts).toMatchObject({ lines: 4, events: 5, notWrites: 1, malformed: 2 });
    expect(reader.problems.map((p) => p.line)).toEqual([2, 3]);
  });

  it("reads a Firehose S3 object: gzip members run together, each a CloudWatch Logs subscription message of EKS audit events, on one line of many MiB", async () => {
    const message = (from: number, to: number) =>
      JSON.stringify({
        messageType: "DATA_MESSAGE",
        owner: "123456789012",
        logGroup: "/aws/eks/prod/cluster",
        logStream: "kube-apiserver-audit-0123456789abcdef",
        subscriptionFilters: ["to-firehose"],
        logEvents: lines.slice(from, to).map((line, i) => ({ id: String(from + i), timestamp: T + from + i, message: line })),
      });
    const batches = Array.from({ length: 18 }, (_, b) => message(b * 100, Math.min(lines.length, (b + 1) * 100)));
    const path = join(dir, "firehose-object.gz");
    writeFileSync(path, Buffer.concat(batches.map((m) => gzipSync(m))));
    expect(batches.join("").length).toBeGreaterThan(3 * 1_048_576);
    const { requests, reader } = await read(path);
    expect(requests.map((r) => r.user)).toEqual(users);
    expect((requests[50].response?.object as { data: { blob: string } }).data.blob).toBe("ß".repeat(100_000));
    expect(reader.counts).toMatchObject({ lines: 1, events: lines.length, notWrites: users.length, malformed: 0, foreign: 0 });
  });

  it("reads what aws logs filter-log-events prints of an EKS audit log stream: the messages of its events", async () => {
    const answer = {
      events: lines
        .slice(0, 6)
        .map((line, i) => ({ logStreamName: "kube-apiserver-audit-0123", timestamp: T + i, message: line, ingestionTime: T + i + 900, eventId: String(i) })),
      searchedLogStreams: [{ logStreamName: "kube-apiserver-audit-0123", searchedCompletely: true }],
    };
    const path = join(dir, "filter-log-events.json");
    writeFileSync(path, JSON.stringify(answer, null, 4) + "\n");
    const { requests, reader } = await read(path);
    expect(requests.map((r) => r.user)).toEqual(users.slice(0, 3));
    expect(reader.counts).toMatchObject({ events: 6, notWrites: 3, malformed: 0, foreign: 0 });
  });
});
