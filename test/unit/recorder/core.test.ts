/** The recorder's pure core on a real SQLite store: first list, events, duplicates, bookmarks, relist reconciliation. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { ProfileRecorder } from "@/lib/recorder/core";
import { WriteStore } from "@/lib/store/store";

const lease = (name: string, rv: string, renewTime: string) => ({ apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name, namespace: "ns", resourceVersion: rv }, spec: { holderIdentity: name, renewTime } });

function setup() {
  const store = new WriteStore(join(mkdtempSync(join(tmpdir(), "churnscope-core-")), "s.sqlite"));
  const recorder = new ProfileRecorder(store, "c1", DEFAULT_PROFILES.filter((p) => p.name === "lease"));
  const writes = () => store.db.prepare("SELECT o.name, w.rv, w.class, w.heartbeat FROM writes w JOIN objects o ON o.id = w.object_id ORDER BY w.id").all();
  return { store, recorder, writes };
}

describe("ProfileRecorder", () => {
  it("records nothing for the first list, then each new version once", () => {
    const { recorder, writes } = setup();
    expect(recorder.applyList([lease("a", "1", "t1"), lease("b", "2", "t1")], "2", 1000)).toBe(0);
    expect(recorder.resumeVersion()).toBe("2");
    expect(recorder.applyEvent("MODIFIED", lease("a", "3", "t2"), 2000)).toBe(true);
    expect(recorder.applyEvent("MODIFIED", lease("a", "3", "t2"), 2001)).toBe(false); // the same version again
    expect(recorder.applyEvent("BOOKMARK", { metadata: { resourceVersion: "9" } }, 2002)).toBe(false);
    expect(recorder.resumeVersion()).toBe("9");
    expect(recorder.applyEvent("DELETED", lease("b", "10", "t1"), 3000)).toBe(true);
    expect(writes()).toEqual([
      { name: "a", rv: "3", class: "unrouted", heartbeat: 1 },
      { name: "b", rv: "deleted@10", class: "delete", heartbeat: 0 },
    ]);
  });

  it("reconciles a relist: changed objects are written, missing ones deleted, unchanged ones left alone", () => {
    const { recorder, writes } = setup();
    recorder.applyList([lease("a", "1", "t1"), lease("b", "2", "t1"), lease("c", "3", "t1")], "3", 1000);
    recorder.applyList([lease("a", "1", "t1"), lease("b", "7", "t9"), lease("d", "8", "t1")], "8", 2000);
    expect(writes()).toEqual([
      { name: "b", rv: "7", class: "unrouted", heartbeat: 1 },
      { name: "d", rv: "8", class: "create", heartbeat: 0 },
      { name: "c", rv: "deleted@8", class: "delete", heartbeat: 0 },
    ]);
  });
});
