/**
 * Clients marks the write requests the API server answers without storing anything (access and token reviews,
 * TokenRequests): per client, per resource and in total, counted here from the generated requests themselves.
 */
import { describe, expect, it } from "vitest";
import { AuditIngester } from "@/lib/audit/ingest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { queryClients } from "@/lib/store/clients-query";
import { auditEvent, type EventSpec } from "../../helpers/audit-log";
import { storeEngines } from "../../helpers/store-engines";

const T = Date.UTC(2026, 11, 2, 9, 0, 0);
const PROXY = { user: "system:serviceaccount:monitoring:node-exporter", userAgent: "kube-rbac-proxy/v0.18.0 (linux/amd64)" };
const KUBELET = { user: "system:node:worker-1", userAgent: "kubelet/v1.33.2 (linux/amd64) kubernetes/abcdef0" };
const LABELER = { user: "system:serviceaccount:apps:labeler", userAgent: "labeler/v2" };

describe.each(storeEngines())("Clients on %s: writes that are never stored", (_name, engine) => {
  it("counts each client's reviews and TokenRequests apart, flags their resources, and leaves real writes unmarked", async () => {
    const specs: (EventSpec & { neverStored: boolean })[] = [];
    for (let i = 0; i < 30; i++) {
      // kube-rbac-proxy: a TokenReview and a SubjectAccessReview per scrape.
      specs.push({ ...PROXY, verb: "create", resource: "tokenreviews", group: "authentication.k8s.io", receivedMs: T + i * 1000, neverStored: true });
      specs.push({
        ...PROXY,
        verb: "create",
        resource: "subjectaccessreviews",
        group: "authorization.k8s.io",
        receivedMs: T + i * 1000 + 1,
        neverStored: true,
      });
    }
    for (let i = 0; i < 4; i++) {
      specs.push({
        ...KUBELET,
        verb: "create",
        resource: "serviceaccounts",
        namespace: "apps",
        name: "web",
        subresource: "token",
        receivedMs: T + i * 60_000,
        neverStored: true,
      });
      specs.push({
        ...KUBELET,
        verb: "patch",
        resource: "pods",
        namespace: "apps",
        name: `web-${i}`,
        subresource: "status",
        receivedMs: T + i * 60_000 + 5,
        neverStored: false,
      });
    }
    for (let i = 0; i < 7; i++)
      specs.push({ ...LABELER, verb: "update", resource: "configmaps", namespace: "apps", name: "labels", receivedMs: T + i * 10_000, neverStored: false });

    const store = await engine.writeStore();
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    specs.forEach((spec, i) => ingester.line(JSON.stringify(auditEvent({ ...spec, level: "Metadata" })), i + 1, "test.log"));
    await ingester.flush();
    const answer = await queryClients(store.audit(), { startMs: T - 60_000, endMs: T + 3_600_000 });

    const client = (who: { user: string; userAgent: string }) => `${who.user} · ${who.userAgent.split("/")[0]}`;
    const expected = (who: { user: string }) => specs.filter((s) => s.user === who.user && s.neverStored).length;
    expect(Object.fromEntries(answer.clients.map((c) => [c.client, [c.writes, c.neverStored]]))).toEqual({
      [client(PROXY)]: [60, expected(PROXY)],
      [client(KUBELET)]: [8, expected(KUBELET)],
      [client(LABELER)]: [7, expected(LABELER)],
    });
    expect(answer.total).toBe(specs.length);
    expect(answer.neverStored).toBe(specs.filter((s) => s.neverStored).length);
    expect(Object.fromEntries(answer.byResource.map((r) => [r.resource, r.neverStored]))).toEqual({
      "tokenreviews.authentication.k8s.io": true,
      "subjectaccessreviews.authorization.k8s.io": true,
      "serviceaccounts/token": true,
      "pods/status": false,
      configmaps: false,
    });
  });
});
