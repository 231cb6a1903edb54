/**
 * Opening a snapshot (unpacking, parsing and checking the bundle: about a second for the replay) happens
 * in a thread, so the first view of a shared snapshot link does not stop every other request meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type TestApp } from "../helpers/app";

let app: TestApp;
beforeAll(async () => {
  app = await startApp({});
}, 120_000);
afterAll(async () => {
  await app?.stop();
});

describe("opening a snapshot", () => {
  it("lets other requests be answered while it opens, and answers everyone who asked meanwhile with one copy", async () => {
    const panel = `${app.url}/api/panels/writes-by-resource?snapshot=replay&from=1788912000000&to=1789279200000`;
    let opening = true;
    let answeredMeanwhile = 0;
    const probes = (async () => {
      while (opening) {
        if ((await fetch(`${app.url}/healthz`)).ok && opening) answeredMeanwhile++;
      }
    })();
    const answers = await Promise.all([fetch(panel), fetch(panel), fetch(`${app.url}/api/snapshots/replay`)]);
    opening = false;
    await probes;
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    // On the request thread the replay took about 1.1 s, in which no other request was answered (one or two
    // probes got in before or after); in a thread, the probes go on answering every few milliseconds.
    expect(answeredMeanwhile).toBeGreaterThanOrEqual(20);
    const [first, second] = await Promise.all(answers.slice(0, 2).map((r) => r.json()));
    expect(second).toEqual(first);
    const info = (await answers[2].json()).data;
    expect(info.objectWriteCount).toBeGreaterThan(100_000);
  });
});
