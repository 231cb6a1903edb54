/**
 * Opening a stored snapshot (unpacking, parsing and checking the bundle again: seconds for one the replay's size)
 * happens in a thread, so the first view of a shared snapshot link does not stop every other request meanwhile.
 * The replay itself opens from the held part the build wrote, as the server starts (startup.test.ts).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPLAY_BUNDLE_PATH } from "@/lib/snapshot/store";
import { startApp, uploadSnapshot, type TestApp } from "../helpers/app";

let app: TestApp;
let id: string;
beforeAll(async () => {
  // A bundle the replay's size, stored by one server and opened from storage by the next.
  const dataDir = mkdtempSync(join(tmpdir(), "churnscope-open-"));
  const first = await startApp({ CHURNSCOPE_DATA_DIR: dataDir });
  try {
    const stored = await uploadSnapshot(first.url, new Uint8Array(readFileSync(REPLAY_BUNDLE_PATH)));
    expect(stored.status).toBe(200);
    id = (await stored.json()).data.id;
  } finally {
    await first.stop();
  }
  app = await startApp({ CHURNSCOPE_DATA_DIR: dataDir });
}, 120_000);
afterAll(async () => {
  await app?.stop();
});

describe("opening a stored snapshot", () => {
  it("lets other requests be answered while it opens, and answers everyone who asked meanwhile with one copy", async () => {
    const panel = `${app.url}/api/panels/writes-by-resource?snapshot=${id}&from=1788912000000&to=1789279200000`;
    let opening = true;
    let answeredMeanwhile = 0;
    const probes = (async () => {
      while (opening) {
        if ((await fetch(`${app.url}/healthz`)).ok && opening) answeredMeanwhile++;
      }
    })();
    const answers = await Promise.all([fetch(panel), fetch(panel), fetch(`${app.url}/api/snapshots/${id}`)]);
    opening = false;
    await probes;
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    // On the request thread the replay's bundle took about 1.1 s, in which no other request was answered (one or two
    // probes got in before or after); in a thread, the probes go on answering every few milliseconds.
    expect(answeredMeanwhile).toBeGreaterThanOrEqual(20);
    const [first, second] = await Promise.all(answers.slice(0, 2).map((r) => r.json()));
    expect(second).toEqual(first);
    const info = (await answers[2].json()).data;
    expect(info.objectWriteCount).toBeGreaterThan(100_000);
  });
});
