/**
 * Why it started, against a real kube-apiserver: the dashboard records the cluster (its shipped profiles: Deployments
 * and Leases) while three writers renew their Leases. writer-a's Deployment changes image and writer-a then writes
 * five times as fast; writer-b's Deployment rolls in the same second and writer-b goes on as before; writer-c's rolls
 * later, without effect. /api/changes must name writer-a's rollout as the one the rate moved with, list writer-b's
 * and writer-c's as ones it did not move with, and date each change as the server's audit log does. Then Flux's and
 * Argo CD's own CRDs are installed into the running cluster, and the revisions their objects move to are recorded too.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppsV1Api, CoordinationV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChangesAnswer } from "@/lib/wire/changes";
import type { Marker } from "@/lib/markers/marker";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { serverWrites } from "../helpers/audit-truth";
import { startControlPlane, type ControlPlane, type ControlPlaneUser } from "../helpers/control-plane";
import { createNamespaces } from "../helpers/controllers";
import { sharedData } from "../helpers/shared-data";

const CLUSTER = "kind-dev";
const NAMESPACE = "apps";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WRITERS = ["writer-a", "writer-b", "writer-c"] as const;
const users: Record<(typeof WRITERS)[number] | "deployer", ControlPlaneUser> = {
  "writer-a": { name: "writer-a", token: "writer-a-token" },
  "writer-b": { name: "writer-b", token: "writer-b-token" },
  "writer-c": { name: "writer-c", token: "writer-c-token" },
  deployer: { name: "deployer", token: "deployer-token" },
};
const IMAGES = { "writer-a": "example.com/writer-a", "writer-b": "example.com/writer-b", "writer-c": "example.com/writer-c" };

let cp: ControlPlane;
let app: TestApp;

const deployment = (name: string, image: string) => ({
  metadata: { name, namespace: NAMESPACE },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image }] } },
  },
});

/** One writer renewing its own Lease `perSecond` times a second until `untilMs`: each renewal a new version. */
async function renew(kc: KubeConfig, writer: string, perSecond: number, untilMs: number): Promise<number> {
  const api = kc.makeApiClient(CoordinationV1Api);
  const options = setHeaderOptions("Content-Type", PatchStrategy.MergePatch, setHeaderOptions("User-Agent", `${writer}/1.0`));
  let writes = 0;
  while (Date.now() < untilMs) {
    const started = Date.now();
    const body = { spec: { renewTime: new Date().toISOString().replace("Z", "000Z") } };
    await api.patchNamespacedLease({ name: writer, namespace: NAMESPACE, body, fieldManager: writer }, options);
    writes++;
    await sleep(Math.max(0, 1000 / perSecond - (Date.now() - started)));
  }
  return writes;
}

async function rollout(kc: KubeConfig, name: keyof typeof IMAGES, tag: string): Promise<void> {
  const api = kc.makeApiClient(AppsV1Api);
  const body = { spec: { template: { spec: { containers: [{ name: "main", image: `${IMAGES[name]}:${tag}` }] } } } };
  await api.patchNamespacedDeployment(
    { name, namespace: NAMESPACE, body, fieldManager: "kubectl-set" },
    setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch, setHeaderOptions("User-Agent", "kubectl/v1.34.0")),
  );
}

beforeAll(async () => {
  cp = await startControlPlane({ users: Object.values(users) });
  await createNamespaces(cp.kubeConfig(), [NAMESPACE]);
  const apps = cp.kubeConfig().makeApiClient(AppsV1Api);
  const leases = cp.kubeConfig().makeApiClient(CoordinationV1Api);
  for (const name of WRITERS) {
    await apps.createNamespacedDeployment({ namespace: NAMESPACE, body: deployment(name, `${IMAGES[name]}:${name === "writer-c" ? "v3" : "v1"}`) });
    await leases.createNamespacedLease({ namespace: NAMESPACE, body: { metadata: { name, namespace: NAMESPACE }, spec: { holderIdentity: name } } });
  }
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "churnscope-kubeconfig-")), "config");
  writeFileSync(kubeconfig, cp.kubeConfig().exportConfig());
  // Flux's and Argo CD's kinds are not served until the second test installs them: asked for again every 2 s.
  const config = `clusters: [{ name: ${CLUSTER}, kubeconfig: ${kubeconfig} }]\nrecorder: { unservedRetrySeconds: 2 }\n`;
  app = await startApp({ CHURNSCOPE_CONFIG: writeConfig(config) });
}, 240_000);

afterAll(async () => {
  await app?.stop();
  await cp?.stop();
});

async function recording(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    if (new RegExp(`^churnscope_recorder_leader\\{cluster="${CLUSTER}"\\} 1$`, "m").test(metrics)) return;
    await sleep(250);
  }
  throw new Error("the dashboard did not start recording the cluster");
}

describe("the changes around an onset, on a real control plane", () => {
  it("names the rollout the rate moved with, and lists the one in the same second and a later one as not moved", async () => {
    await recording();
    await sleep(2_000); // the first lists: what exists is a baseline, not a change
    const kc = (user: ControlPlaneUser) => cp.kubeConfig(user);
    const fromMs = Date.now();
    // Six of the changes view's 5 s steps on each side of the rollout: the detector's segments need three.
    const changeAtMs = fromMs + 30_000;
    const endMs = changeAtMs + 30_000;
    // writer-a: 2 writes/s, then 10/s from its rollout on; writer-b and writer-c: 2/s throughout.
    const writing = Promise.all([
      renew(kc(users["writer-a"]), "writer-a", 2, changeAtMs).then(() => renew(kc(users["writer-a"]), "writer-a", 10, endMs)),
      renew(kc(users["writer-b"]), "writer-b", 2, endMs),
      renew(kc(users["writer-c"]), "writer-c", 2, endMs),
    ]);
    await sleep(changeAtMs - Date.now() - 500);
    await rollout(kc(users.deployer), "writer-a", "v2");
    await rollout(kc(users.deployer), "writer-b", "v1.1");
    await sleep(15_000);
    await rollout(kc(users.deployer), "writer-c", "v4");
    await writing;
    await sleep(2_000); // the last versions reach the recorder
    // The range is the writing itself: after it, every writer's rate falls to nothing.
    const toMs = endMs;

    const range = `from=${new Date(fromMs).toISOString()}&to=${new Date(toMs).toISOString()}`;
    const answer = (await (await fetch(`${app.url}/api/changes?${range}`)).json()) as { data: ChangesAnswer };
    const { data } = answer;
    if (process.env.DEBUG_CHANGES) writeFileSync(process.env.DEBUG_CHANGES, JSON.stringify(answer, null, 1));
    // The server's own record of the three rollouts: which Deployment, and when each took effect.
    const rollouts = serverWrites(cp.auditLogPath).filter((w) => w.resource === "deployments" && w.user === "deployer" && w.stageMs > fromMs);
    expect(rollouts.map((w) => w.name)).toEqual(["writer-a", "writer-b", "writer-c"]);
    expect(data.changes.map((v) => v.change.key.name)).toEqual(["writer-a", "writer-b", "writer-c"]);
    for (const [i, v] of data.changes.entries()) {
      // Recorded when the watch delivered it: within 2 s of the server's completion.
      expect(Math.abs(v.change.tsMs - rollouts[i].stageMs), v.change.summary).toBeLessThan(2_000);
    }
    expect(data.changes.map((v) => v.change.summary)).toEqual(["image writer-a v1 → v2", "image writer-b v1 → v1.1", "image writer-c v3 → v4"]);
    expect(data.changes.map((v) => v.verdict)).toEqual(["moved", "did not move", "did not move"]);
    expect(data.changes.map((v) => v.matches.map((m) => m.writer))).toEqual([["writer-a"], ["writer-b"], ["writer-c"]]);
    // The onset was found in the recorded writes, within two steps of writer-a's rollout.
    expect(data.onset?.detectedFrom).toBe("recorded writes");
    expect(Math.abs(data.onset!.timeMs - rollouts[0].stageMs)).toBeLessThanOrEqual(2 * data.stepMs);
    // writer-a's own rate: about 2/s before, about 10/s after (the window holds the whole run on each side).
    const a = data.changes[0].rates[0];
    expect(a.before).toBeGreaterThan(1);
    expect(a.before).toBeLessThan(3);
    expect(a.after).toBeGreaterThan(6);
    expect(data.conclusion).toBe("The onset follows image writer-a v1 → v2 (writer-a).");
    expect(data.changes[0].said).toMatch(
      /^the rate moved with it: writer-a .* writes\/s \(field manager "writer-a" is named like its image example.com\/writer-a:v2\)$/,
    );
    expect(data.changes[1].said).toMatch(/^the rate did not move \(writer-b /);
    expect(data.writers[0]).toMatchObject({ writer: "writer-a", workload: { key: { name: "writer-a", kind: "Deployment" } } });

    // The charts draw the same three changes, each with its diff.
    const markers = ((await (await fetch(`${app.url}/api/markers?${range}`)).json()) as { data: Marker[] }).data.filter((m) => m.kind === "change");
    expect(markers.map((m) => m.label)).toEqual(["image writer-a v1 → v2", "image writer-b v1 → v1.1", "image writer-c v3 → v4"]);
    expect(markers[0].detail).toContain("spec.containers[name=main].image: example.com/writer-a:v1 → example.com/writer-a:v2");
  }, 180_000);

  it("records Flux's and Argo CD's applied revisions as changes once their CRDs are installed, after it started", async () => {
    await recording();
    const crds = ["kustomize.toolkit.fluxcd.io_kustomizations.yaml", "helm.toolkit.fluxcd.io_helmreleases.yaml", "application-crd.yaml"];
    await cp.installCrds(crds.map((file) => sharedData(`fixtures/gitops-crds/${file}`)));
    const fromMs = Date.now();
    // The recorder finds each kind served within its retry (2 s) and lists it.
    const resources = ["kustomizations.kustomize.toolkit.fluxcd.io", "helmreleases.helm.toolkit.fluxcd.io", "applications.argoproj.io"];
    const deadline = Date.now() + 30_000;
    let metrics = "";
    while (Date.now() < deadline && !resources.every((r) => metrics.includes(`churnscope_recorder_watching{cluster="${CLUSTER}",resource="${r}"} 1`)))
      metrics = await (await fetch(`${app.url}/metrics`)).text().then(async (text) => (await sleep(250), text));
    for (const r of resources) expect(metrics, r).toContain(`churnscope_recorder_watching{cluster="${CLUSTER}",resource="${r}"} 1`);

    const api = cp.kubeConfig(users.deployer).makeApiClient(CustomObjectsApi);
    const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
    const flux = { group: "kustomize.toolkit.fluxcd.io", version: "v1", namespace: NAMESPACE, plural: "kustomizations" };
    const helm = { group: "helm.toolkit.fluxcd.io", version: "v2", namespace: NAMESPACE, plural: "helmreleases" };
    const argo = { group: "argoproj.io", version: "v1alpha1", namespace: NAMESPACE, plural: "applications" };
    const REVISIONS = ["v0.83.41@sha1:1f0c2e9", "v0.83.42@sha1:7a3b5d1"];
    // Flux's kustomize-controller: the object, then its status as it reconciles (a condition alone is no change).
    const spec = { interval: "10m", prune: true, sourceRef: { kind: "GitRepository", name: "infra" } };
    await api.createNamespacedCustomObject({
      ...flux,
      fieldManager: "kustomize-controller",
      body: { apiVersion: "kustomize.toolkit.fluxcd.io/v1", kind: "Kustomization", metadata: { name: "infra" }, spec },
    });
    const fluxStatus = (status: object) =>
      api.patchNamespacedCustomObjectStatus({ ...flux, name: "infra", body: { status }, fieldManager: "kustomize-controller" }, merge);
    const ready = {
      type: "Ready",
      status: "True",
      reason: "ReconciliationSucceeded",
      message: "Applied",
      lastTransitionTime: new Date().toISOString().slice(0, 19) + "Z",
    };
    await fluxStatus({ lastAppliedRevision: REVISIONS[0], conditions: [ready] });
    await fluxStatus({ conditions: [{ ...ready, message: "Applied again" }] });
    await fluxStatus({ lastAppliedRevision: REVISIONS[1] });
    // helm-controller: the release's chart version as it attempts it.
    await api.createNamespacedCustomObject({
      ...helm,
      fieldManager: "helm-controller",
      body: {
        apiVersion: "helm.toolkit.fluxcd.io/v2",
        kind: "HelmRelease",
        metadata: { name: "gateway" },
        spec: { interval: "5m", chartRef: { kind: "OCIRepository", name: "gateway" } },
      },
    });
    await api.patchNamespacedCustomObjectStatus(
      { ...helm, name: "gateway", body: { status: { lastAttemptedRevision: "0.1.4" } }, fieldManager: "helm-controller" },
      merge,
    );
    // Argo CD writes an Application's status with the object (its CRD has no status subresource).
    const application = {
      destination: { server: "https://kubernetes.default.svc", namespace: "edge" },
      project: "default",
      source: { repoURL: "https://example.com/edge.git" },
    };
    await api.createNamespacedCustomObject({
      ...argo,
      fieldManager: "argocd-application-controller",
      body: {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: "edge" },
        spec: application,
        status: { sync: { status: "Synced", revision: "4e1d2c7" } },
      },
    });
    await api.patchNamespacedCustomObject(
      { ...argo, name: "edge", body: { status: { sync: { status: "Synced", revision: "9b8a6f0" } } }, fieldManager: "argocd-application-controller" },
      merge,
    );
    await sleep(2_000); // the last versions reach the recorder
    const toMs = Date.now();

    const range = `from=${new Date(fromMs).toISOString()}&to=${new Date(toMs).toISOString()}`;
    const markers = ((await (await fetch(`${app.url}/api/markers?${range}`)).json()) as { data: Marker[] }).data.filter((m) => m.kind === "change");
    expect(markers.map((m) => [m.label, m.detail.split("\n")[0]])).toEqual([
      ["created at no revision yet", `Kustomization ${NAMESPACE}/infra on ${CLUSTER}, by kustomize-controller`],
      [`revision (none) → ${REVISIONS[0]}`, `Kustomization ${NAMESPACE}/infra on ${CLUSTER}, by kustomize-controller`],
      [`revision ${REVISIONS[0]} → ${REVISIONS[1]}`, `Kustomization ${NAMESPACE}/infra on ${CLUSTER}, by kustomize-controller`],
      ["created at no revision yet", `HelmRelease ${NAMESPACE}/gateway on ${CLUSTER}, by helm-controller`],
      ["revision (none) → 0.1.4", `HelmRelease ${NAMESPACE}/gateway on ${CLUSTER}, by helm-controller`],
      ["created at 4e1d2c7", `Application ${NAMESPACE}/edge on ${CLUSTER}, by argocd-application-controller`],
      ["revision 4e1d2c7 → 9b8a6f0", `Application ${NAMESPACE}/edge on ${CLUSTER}, by argocd-application-controller`],
    ]);
    // Each dated as the server's audit log dates the write that made it (the condition-only patch made none).
    const made = serverWrites(cp.auditLogPath).filter((w) => ["kustomizations", "helmreleases", "applications"].includes(w.resource) && w.stageMs > fromMs);
    const changing = made.filter((_, i) => i !== 2);
    expect(made.map((w) => `${w.verb} ${w.name}`)).toEqual([
      "create infra",
      "patch infra",
      "patch infra",
      "patch infra",
      "create gateway",
      "patch gateway",
      "create edge",
      "patch edge",
    ]);
    for (const [i, m] of markers.entries()) expect(Math.abs(m.timeMs - changing[i].stageMs), m.label).toBeLessThan(2_000);
  }, 120_000);
});
