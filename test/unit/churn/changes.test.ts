/**
 * Recorded changes, read from writes as the shipped profiles read them: a workload's template (images, args, env,
 * config references, service account) and a GitOps revision. The expected lines are read off the objects below.
 */
import { describe, expect, it } from "vitest";
import { analyze } from "@/lib/churn/analyze";
import { baselineOf, imageParts, MAX_DIFF_LINES } from "@/lib/churn/changes";
import type { Json } from "@/lib/churn/json";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { prepare } from "@/lib/churn/analyze";

/** The test's objects as the analysis reads them. */
const json = (value: unknown) => value as Json;
const profile = (name: string) => DEFAULT_PROFILES.find((p) => p.name === name)!;
const DEPLOYMENT = profile("deployment");

function deployment(options: { image?: string; replicas?: number; logLevel?: string; account?: string; rv?: string; available?: number } = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "network-services-operator",
      namespace: "nso-system",
      resourceVersion: options.rv ?? "100",
      generation: 3,
      managedFields: [
        { manager: "kustomize-controller", operation: "Apply", time: "2026-09-07T09:12:00Z", fieldsV1: { "f:spec": { "f:template": { "f:spec": {} } } } },
        { manager: "kube-controller-manager", operation: "Update", subresource: "status", time: "2026-09-11T12:00:00Z", fieldsV1: { "f:status": {} } },
      ],
    },
    spec: {
      replicas: options.replicas ?? 2,
      template: {
        metadata: { labels: { app: "nso" } },
        spec: {
          serviceAccountName: options.account ?? "network-services-operator",
          containers: [
            {
              name: "manager",
              image: options.image ?? "ghcr.io/datum-cloud/network-services-operator:v0.26.4",
              args: ["--leader-elect"],
              env: [{ name: "LOG_LEVEL", value: options.logLevel ?? "info" }],
            },
          ],
        },
      },
    },
    status: { availableReplicas: options.available ?? 2 },
  };
}

describe("a workload's changes", () => {
  it("names an image change by its image and both tags, with the diff under the pod template", () => {
    const a = analyze(DEPLOYMENT, json(deployment()), json(deployment({ image: "ghcr.io/datum-cloud/network-services-operator:v0.26.5", rv: "101" })));
    expect(a.cls).toBe("routed");
    expect(a.change?.summary).toBe("image network-services-operator v0.26.4 → v0.26.5");
    expect(a.change?.diff).toEqual([
      {
        path: "spec.containers[name=manager].image",
        before: "ghcr.io/datum-cloud/network-services-operator:v0.26.4",
        after: "ghcr.io/datum-cloud/network-services-operator:v0.26.5",
      },
    ]);
    expect(a.change?.subject).toEqual({ serviceAccount: "network-services-operator", images: ["ghcr.io/datum-cloud/network-services-operator:v0.26.5"] });
  });

  it("records env and service account changes by path, and no change for replicas or status", () => {
    const env = analyze(DEPLOYMENT, json(deployment()), json(deployment({ logLevel: "debug", rv: "101" })));
    expect(env.change?.summary).toBe("template: spec.containers[name=manager].env[name=LOG_LEVEL].value");
    expect(env.change?.diff).toEqual([{ path: "spec.containers[name=manager].env[name=LOG_LEVEL].value", before: "info", after: "debug" }]);
    const account = analyze(DEPLOYMENT, json(deployment()), json(deployment({ account: "nso-v2", logLevel: "debug", rv: "101" })));
    expect(account.change?.summary).toBe("template: spec.serviceAccountName and 1 more");
    expect(account.change?.subject.serviceAccount).toBe("nso-v2");
    // A scale and a status update are writes, not changes of what runs.
    const scaled = analyze(DEPLOYMENT, json(deployment()), json(deployment({ replicas: 5, rv: "101" })));
    expect([scaled.cls, scaled.change]).toEqual(["unrouted", undefined]);
    const status = analyze(DEPLOYMENT, json(deployment()), json(deployment({ available: 1, rv: "101" })));
    expect([status.cls, status.change]).toEqual(["unrouted", undefined]);
  });

  it("records a create with what it runs, and bounds a diff however large the template", () => {
    expect(analyze(DEPLOYMENT, undefined, json(deployment())).change?.summary).toBe("created: network-services-operator v0.26.4");
    const wide = (n: number) => {
      const d = deployment();
      d.spec.template.spec.containers[0].env = Array.from({ length: 100 }, (_, i) => ({ name: `V${i}`, value: `${n}`.repeat(1_000) }));
      return json(d);
    };
    const change = analyze(DEPLOYMENT, wide(1), wide(2)).change!;
    expect(change.diff).toHaveLength(MAX_DIFF_LINES);
    expect(Math.max(...change.diff.map((l) => l.after.length))).toBeLessThanOrEqual(300);
    expect(change.summary).toBe("template: spec.containers[name=manager].env[name=V0].value and 99 more");
  });

  it("takes a baseline's date from the field manager that last wrote the template, not from the status writer", () => {
    const obj = json(deployment());
    const baseline = baselineOf(DEPLOYMENT, prepare(DEPLOYMENT, obj))!;
    expect(baseline.summary).toBe("running network-services-operator v0.26.4");
    expect(baseline.sinceMs).toBe(Date.parse("2026-09-07T09:12:00Z"));
  });

  it("reads an image's name and tag, with or without a registry, port or digest", () => {
    expect(imageParts("nginx")).toEqual({ repository: "nginx", name: "nginx", tag: "latest" });
    expect(imageParts("registry:5000/team/app:1.2")).toEqual({ repository: "registry:5000/team/app", name: "app", tag: "1.2" });
    expect(imageParts("ghcr.io/a/b@sha256:0123456789abcdef0123")).toEqual({ repository: "ghcr.io/a/b", name: "b", tag: "sha256:0123456789ab" }); // a digest shortened to 12 hex digits, as docker prints it
  });
});

describe("a GitOps revision", () => {
  it("is the change of a Flux Kustomization's applied revision, and an Argo CD Application's synced one", () => {
    const kustomization = (revision: string, rv: string) =>
      ({
        kind: "Kustomization",
        metadata: { name: "infra", namespace: "flux-system", resourceVersion: rv },
        status: { lastAppliedRevision: revision },
      }) as unknown as Json;
    const flux = analyze(profile("flux-kustomization"), kustomization("v0.83.41@sha1:aaa", "1"), kustomization("v0.83.42@sha1:bbb", "2"));
    expect(flux.change?.summary).toBe("revision v0.83.41@sha1:aaa → v0.83.42@sha1:bbb");
    expect(flux.change?.diff).toEqual([{ path: "revision", before: "v0.83.41@sha1:aaa", after: "v0.83.42@sha1:bbb" }]);
    const app = (revision: string, rv: string) =>
      ({
        kind: "Application",
        metadata: { name: "edge", namespace: "argocd", resourceVersion: rv },
        status: { sync: { revision, status: "Synced" } },
      }) as unknown as Json;
    expect(analyze(profile("argocd-application"), app("abc123", "1"), app("def456", "2")).change?.summary).toBe("revision abc123 → def456");
    // A reconcile that applies the same revision again changes nothing.
    expect(analyze(profile("flux-kustomization"), kustomization("v1@sha1:a", "1"), kustomization("v1@sha1:a", "2")).change).toBeUndefined();
  });
});
