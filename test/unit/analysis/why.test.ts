/**
 * Why it started: changes tied to writers only by what their writes carry, and tested against each writer's own rate
 * at the change. The rates below are built step by step, so where each one steps, and to what, is known here.
 */
import { describe, expect, it } from "vitest";
import { explainOnset, matchWriter, onsetOfWriters, type ChangeInput, type WriterRate } from "@/lib/analysis/why";

const STEP = 60_000;
const T0 = Date.parse("2026-09-11T10:00:00Z");
const STEPS = 300;
const at = (minute: number) => T0 + minute * STEP;

/** A writer's rate: `before` writes/s until `minute`, `after` from it on, with a small deterministic wobble. */
function writer(name: string, userAgent: string, before: number, after = before, minute = STEPS): WriterRate {
  return {
    writer: name,
    userAgent,
    points: Array.from({ length: STEPS }, (_, k) => [at(k + 1), (k + 1 >= minute ? after : before) * (1 + 0.02 * Math.sin(k * 1.7))]),
  };
}

const key = (name: string, kind = "Deployment", namespace = "apps") => ({ cluster: "hub", group: "apps", kind, namespace, name });
function change(name: string, minute: number, summary: string, images: string[], serviceAccount = "default"): ChangeInput {
  return { key: key(name), tsMs: at(minute), writer: "kubectl", summary, diff: [], subject: { serviceAccount, images } };
}

describe("tying a change to writers", () => {
  const nso = { key: key("nso", "Deployment", "nso-system"), subject: { serviceAccount: "nso", images: ["ghcr.io/datum/network-services-operator:v0.26.5"] } };

  it("ties by the service account a writer writes as, a field manager named like an image, or a user agent so named", () => {
    expect(matchWriter(nso, { writer: "system:serviceaccount:nso-system:nso", userAgent: "" })).toBe("writes as its service account nso-system/nso");
    expect(matchWriter(nso, { writer: "network-services-operator", userAgent: "" })).toBe(
      'field manager "network-services-operator" is named like its image ghcr.io/datum/network-services-operator:v0.26.5',
    );
    expect(matchWriter(nso, { writer: "system:serviceaccount:other:x", userAgent: "network-services-operator/v0.26.5 (linux/amd64)" })).toBe(
      'user agent "network-services-operator/v0.26.5 (linux/amd64)" is named like its image ghcr.io/datum/network-services-operator:v0.26.5',
    );
  });

  it("ties nothing on a shared default account, another namespace's account of the same name, or a similar name", () => {
    const onDefault = { ...nso, subject: { ...nso.subject, serviceAccount: "default" } };
    expect(matchWriter(onDefault, { writer: "system:serviceaccount:nso-system:default", userAgent: "" })).toBeNull();
    expect(matchWriter(nso, { writer: "system:serviceaccount:other:nso", userAgent: "" })).toBeNull();
    expect(matchWriter(nso, { writer: "network-services", userAgent: "kubectl/v1.34" })).toBeNull();
    expect(matchWriter(nso, { writer: "manager", userAgent: "" })).toBeNull();
  });
});

describe("testing changes against the rate", () => {
  // writer-a's Deployment changes image at minute 120 and its writes go from 4/s to 20/s at 122; writer-b's
  // Deployment rolls in the same minute without effect; writer-c's rolls at 200 without effect; a Flux revision
  // at 120 matches nobody.
  const writers = [writer("writer-a", "writer-a/v2", 4, 20, 122), writer("system:serviceaccount:apps:writer-b", "writer-b/v1", 6), writer("writer-c", "", 3)];
  const changes = [
    change("writer-a", 120, "image writer-a v1 → v2", ["example.com/writer-a:v2"]),
    change("writer-b", 120, "image writer-b v1 → v1.1", ["example.com/other:v1.1"], "writer-b"),
    change("writer-c", 200, "image writer-c v3 → v4", ["example.com/writer-c:v4"]),
    { ...change("infra", 120, "revision v0.83.41 → v0.83.42", []), key: key("infra", "Kustomization", "flux-system") },
  ];

  it("finds the onset in the writers' rates when the page gives none", () => {
    expect(onsetOfWriters(writers)).toBe(at(122));
  });

  it("names the change the rate moved with, lists the one in the same minute and the later one as not moved, and an untied one the rate stepped at as listed, not named", () => {
    const answer = explainOnset(changes, writers, [], { stepMs: STEP, onsetMs: at(122) });
    expect(answer.changes.map((v) => [v.change.key.name, v.verdict])).toEqual([
      ["writer-a", "moved"],
      ["writer-b", "did not move"],
      ["writer-c", "did not move"],
      ["infra", "coincides"],
    ]);
    const a = answer.changes[0].rates[0];
    expect(a.writer).toBe("writer-a");
    // The windows are an hour each side of minute 120: before it 4/s; after it 2 minutes at 4 and 58 at 20.
    expect(a.before).toBeCloseTo(4, 0);
    expect(a.after).toBeCloseTo((2 * 4 + 58 * 20) / 60, 0);
    expect(answer.changes[1].matches).toEqual([{ writer: "system:serviceaccount:apps:writer-b", rests: "writes as its service account apps/writer-b" }]);
    expect(answer.changes[0].said).toBe(
      'the rate moved with it: writer-a 4.0 → 19 writes/s (field manager "writer-a" is named like its image example.com/writer-a:v2)',
    );
    expect(answer.conclusion).toBe("The onset follows image writer-a v1 → v2 (writer-a).");
    expect(answer.changes[1].said).toBe("the rate did not move (system:serviceaccount:apps:writer-b 6.0 → 6.0)");
    // Nothing ties the revision to a writer: it is tested against the writer that rose, which stepped two minutes later.
    expect(answer.changes[3].rates.map((r) => [r.writer, r.tied, r.stepped])).toEqual([["writer-a", false, true]]);
    expect(answer.changes[3].said).toBe("the rate stepped at it too (writer-a 4.0 → 19), but no writer ties to it: listed, not named");
    expect(answer.sentence).toContain(`revision v0.83.41 → v0.83.42 (Kustomization flux-system/infra, 2026-09-11 12:00Z): ${answer.changes[3].said}.`);
    expect(answer.sentence).not.toContain("Not a release");
  });

  it("says not a release, and since when the rising writer's workload is unchanged, when no change moved the rate", () => {
    const rising = [writer("network-services-operator", "", 2, 9, 150), writer("datum-connect-agent", "", 1)];
    const unrelated = [change("iroh-gateway", 165, "image iroh-gateway v0.1.3 → v0.1.4", ["example.com/iroh-gateway:v0.1.4"])];
    const latest: ChangeInput[] = [
      {
        ...change("network-services-operator", -5000, "running network-services-operator v0.26.4", ["ghcr.io/datum/network-services-operator:v0.26.4"]),
        baseline: true,
      },
    ];
    latest[0].tsMs = Date.parse("2026-09-07T09:12:00Z");
    const answer = explainOnset(unrelated, rising, latest, { stepMs: STEP, onsetMs: at(150) });
    expect(answer.writers.map((w) => [w.writer, w.workload?.key.name, w.lastChange?.tsMs])).toEqual([
      ["network-services-operator", "network-services-operator", Date.parse("2026-09-07T09:12:00Z")],
    ]);
    // Nothing ties the gateway's rollout to a writer; the writer that rose did not step at it (it rose 15 minutes before).
    expect(answer.changes[0].verdict).toBe("did not move");
    expect(answer.changes[0].rates.map((r) => [r.writer, r.tied])).toEqual([["network-services-operator", false]]);
    // Its hour before the rollout: 45 minutes at 2/s and 15 at 9/s, 3.75; the hour after: 9/s.
    expect(answer.changes[0].said).toBe("the rate did not move (network-services-operator 3.8 → 9.0; no writer ties to it)");
    expect(answer.writers[0].said).toBe("network-services-operator: no change since 2026-09-07.");
    expect(answer.conclusion).toBe("Not a release: the rate rose with none of the recorded changes.");
    expect(answer.sentence).toContain(answer.writers[0].said);
  });

  it("does not call a change the rate moved with after the onset its cause", () => {
    const rollback = [writer("writer-a", "", 20, 4, 200)];
    const late = [change("writer-a", 199, "image writer-a v2 → v1", ["example.com/writer-a:v1"])];
    const answer = explainOnset(late, rollback, [], { stepMs: STEP, onsetMs: at(100) });
    expect(answer.changes[0].verdict).toBe("moved");
    expect(answer.conclusion).toBe("Not a release: the rate rose with none of the recorded changes.");
  });
});
