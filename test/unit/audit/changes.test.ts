/**
 * Changes from an audit log, on both store engines: a Deployment created and its image changed, logged with their
 * bodies, are recorded as changes by whoever made them; a scale is not a change; a write logged without bodies makes
 * none (nothing says what it changed). The expected lines are read off the events below.
 */
import { describe, expect, it } from "vitest";
import { AuditIngester } from "@/lib/audit/ingest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { auditEvent } from "../../helpers/audit-log";
import { storeEngines } from "../../helpers/store-engines";

const START = Date.UTC(2026, 11, 1, 9, 0, 0);
const at = (s: number) => START + s * 1000;

const deployment = (rv: number, image: string, replicas = 2) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "shop", resourceVersion: String(rv), generation: 1 },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image }] } },
  },
});

const event = (seconds: number, verb: string, body: unknown, options: { level?: "Metadata"; user?: string } = {}) =>
  JSON.stringify(
    auditEvent({
      verb,
      group: "apps",
      resource: "deployments",
      namespace: "shop",
      name: "web",
      receivedMs: at(seconds),
      user: options.user ?? "system:serviceaccount:flux-system:kustomize-controller",
      userAgent: "kustomize-controller/v1.4.0",
      ...(options.level ? { level: options.level } : { requestObject: body, responseObject: body }),
      ...(verb === "create" ? { code: 201 } : {}),
    }),
  );

describe.each(storeEngines())("changes from an audit log on %s", (_name, engine) => {
  it("records a create and an image change with their writer, and no change for a scale or a write logged without bodies", async () => {
    const store = await engine.writeStore();
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    const lines = [
      event(0, "create", deployment(10, "registry.example/web:1.0")),
      event(60, "update", deployment(11, "registry.example/web:1.1")),
      event(120, "update", deployment(12, "registry.example/web:1.1", 5)),
      event(180, "patch", undefined, { level: "Metadata" }),
    ];
    lines.forEach((line, i) => ingester.line(line, i + 1, "audit.log"));
    await ingester.flush();
    const { changes, total } = await store.changesBetween(START - 1, at(300), 10);
    expect(total).toBe(2);
    expect(changes.map((c) => [c.tsMs, c.key.kind, c.key.name, c.writer, c.summary])).toEqual([
      [at(0), "Deployment", "web", "system:serviceaccount:flux-system:kustomize-controller", "created: web 1.0"],
      [at(60), "Deployment", "web", "system:serviceaccount:flux-system:kustomize-controller", "image web 1.0 → 1.1"],
    ]);
    expect(changes[1].diff).toEqual([{ path: "spec.containers[name=web].image", before: "registry.example/web:1.0", after: "registry.example/web:1.1" }]);
  });

  it("follows a write compared again when the version before it arrives later: its change is added, or taken back", async () => {
    const store = await engine.writeStore();
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    const deliver = async (...lines: string[]) => {
      lines.forEach((line, i) => ingester.line(line, i + 1, "webhook"));
      await ingester.flush();
    };
    const summaries = async () => (await store.changesBetween(START - 1, at(600), 10)).changes.map((c) => [c.tsMs, c.summary]);
    // A write whose version before it is not known yet: no change can be said.
    await deliver(event(120, "update", deployment(12, "registry.example/web:1.1", 5)));
    expect(await summaries()).toEqual([]);
    // The create arrives: the write is compared with it, and looks like 1.0 → 1.1.
    await deliver(event(0, "create", deployment(10, "registry.example/web:1.0")));
    expect(await summaries()).toEqual([
      [at(0), "created: web 1.0"],
      [at(120), "image web 1.0 → 1.1"],
    ]);
    // The batch between them: 1.1 came at 60 s, and the write at 120 s only scaled it.
    await deliver(event(60, "update", deployment(11, "registry.example/web:1.1")));
    expect(await summaries()).toEqual([
      [at(0), "created: web 1.0"],
      [at(60), "image web 1.0 → 1.1"],
    ]);
    // A version missed between two: the change spans both until it arrives.
    await deliver(event(300, "update", deployment(14, "registry.example/web:1.3")));
    expect((await summaries()).slice(2)).toEqual([[at(300), "image web 1.1 → 1.3"]]);
    await deliver(event(240, "update", deployment(13, "registry.example/web:1.2")));
    expect((await summaries()).slice(2)).toEqual([
      [at(240), "image web 1.1 → 1.2"],
      [at(300), "image web 1.2 → 1.3"],
    ]);
  });
});
