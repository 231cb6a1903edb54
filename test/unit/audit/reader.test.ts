/** The file reader: lines across read chunks, multi-byte characters, 200 kB lines, gzip, a corrupt .gz, and the reader thread. */
import { mkdtempSync, writeFileSync } from "node:fs";
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

  it("drops a line longer than 16 MiB as malformed and reads on after it", async () => {
    const path = join(dir, "long.log");
    writeFileSync(path, `{"x":"${"a".repeat(MAX_LINE_BYTES + 3 * 1_048_576)}"}\n${lines[0]}\n`);
    const { requests, reader } = await read(path);
    expect(requests.map((r) => r.user)).toEqual([users[0]]);
    expect(reader.counts).toMatchObject({ lines: 2, malformed: 1 });
    expect(reader.problems).toEqual([{ source: "test", line: 1, message: "a line longer than 16 MiB" }]);
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
