/** Audit lines → completed write requests: versions, stages, timestamps, envelopes and junk. */
import { describe, expect, it } from "vitest";
import { eventsOf, readLine, toRequest, type AuditEvent } from "@/lib/audit/event";
import { auditEvent, micro } from "../../helpers/audit-log";

const T = Date.UTC(2026, 10, 29, 10, 0, 0, 123);
const base = {
  verb: "patch",
  resource: "httproutes",
  group: "gateway.networking.k8s.io",
  namespace: "apps",
  name: "r1",
  subresource: "status",
  receivedMs: T,
  latencyMs: 12,
  user: "alice",
  userAgent: "kubectl/v1.31.0",
};

function request(line: string) {
  const outcome = readLine(line);
  if (outcome.kind !== "events") throw new Error(`expected events, got ${outcome.kind}`);
  const result = toRequest(outcome.events[0]);
  if (result.kind !== "request") throw new Error(`expected a request, got ${JSON.stringify(result)}`);
  return result.request;
}

describe("readLine and toRequest", () => {
  it("reads a v1 ResponseComplete write with its user, agent, code and latency", () => {
    const r = request(JSON.stringify(auditEvent({ ...base, auditID: "a1", code: 201 })));
    expect(r).toMatchObject({
      key: "a1/ResponseComplete",
      tsMs: T,
      verb: "patch",
      group: "gateway.networking.k8s.io",
      resource: "httproutes",
      subresource: "status",
      namespace: "apps",
      name: "r1",
      user: "alice",
      userAgent: "kubectl/v1.31.0",
      code: 201,
      latencyMs: 12,
    });
  });

  it("reads v1beta1 and falls back to the legacy timestamp when requestReceivedTimestamp is missing", () => {
    const r = request(JSON.stringify(auditEvent({ ...base, apiVersion: "audit.k8s.io/v1beta1", receivedMs: T + 5_000, withoutReceived: true })));
    expect(r.tsMs).toBe(T + 5_000);
    expect(r.latencyMs).toBeNull();
  });

  it("reports an event with no usable time as invalid, naming it", () => {
    const event = auditEvent({ ...base, auditID: "no-time", withoutReceived: true });
    delete event.stageTimestamp;
    const outcome = toRequest(event as AuditEvent);
    expect(outcome).toEqual({ kind: "invalid", message: expect.stringContaining("no-time") });
  });

  it("skips stages nothing counts from the line's head, without parsing the body; parses reads and a watch's start, which are counted", () => {
    expect(readLine(JSON.stringify(auditEvent({ ...base, stage: "RequestReceived" })))).toEqual({ kind: "skipped", reason: "stage" });
    expect(readLine(JSON.stringify(auditEvent({ ...base, verb: "get", stage: "ResponseStarted" })))).toEqual({ kind: "skipped", reason: "stage" });
    expect(readLine(JSON.stringify(auditEvent({ ...base, verb: "watch", stage: "ResponseStarted" }))).kind).toBe("events");
    expect(readLine(JSON.stringify(auditEvent({ ...base, verb: "list" }))).kind).toBe("events");
    // A line cut off mid-write (it does not end like an object) is parsed, so it is reported as malformed.
    expect(readLine(JSON.stringify(auditEvent({ ...base, verb: "get" })).slice(0, -40)).kind).toBe("malformed");
    // Fields in another order are parsed, with the same answer.
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(auditEvent({ ...base, verb: "get" })).reverse()));
    const outcome = readLine(reordered);
    expect(outcome.kind).toBe("events");
    expect(toRequest((outcome as { events: AuditEvent[] }).events[0])).toEqual({ kind: "skipped", reason: "verb" });
  });

  it("a quoted verb inside the request URI does not fool the head reader", () => {
    const event = auditEvent({ ...base, verb: "update" });
    event.requestURI = '/apis/x?q="verb":"get"';
    expect(readLine(JSON.stringify(event)).kind).toBe("events");
  });

  it("counts Panic as completed", () => {
    expect(request(JSON.stringify(auditEvent({ ...base, stage: "Panic", code: 500 }))).key).toMatch(/\/Panic$/);
  });

  it("unwraps envelopes: properties.log as an object and as an escaped string, and a log shipper's log field", () => {
    const event = auditEvent({ ...base, auditID: "env" });
    for (const wrapped of [
      { time: "x", properties: { log: event } },
      { properties: { log: JSON.stringify(event) } },
      { stream: "stdout", log: JSON.stringify(event) },
    ]) {
      expect(request(JSON.stringify(wrapped)).key).toBe("env/ResponseComplete");
    }
  });

  it("reads an Azure Event Hub message: diagnostic records, each with its event in properties.log, beside records that are not audit events", () => {
    const a = auditEvent({ ...base, auditID: "hub-1" });
    const b = auditEvent({ ...base, auditID: "hub-2" });
    const message = {
      records: [
        {
          category: "kube-audit",
          operationName: "Microsoft.ContainerService/managedClusters/diagnosticLogs/Read",
          properties: { log: `${JSON.stringify(a)}\n`, stream: "stdout", pod: "kube-apiserver-0" },
        },
        { category: "kube-apiserver", properties: { log: "I0109 21:24:54.475483       1 clusterstate.go:300] not an event" } },
        { category: "kube-audit-admin", properties: { log: JSON.stringify(b) } },
      ],
    };
    expect(eventsOf(message)?.map((e) => e.auditID)).toEqual(["hub-1", "hub-2"]);
    expect(eventsOf({ records: [{ properties: { log: "plain text" } }] })).toBeNull();
  });

  it("reads a CloudWatch Logs subscription message (EKS's audit log through Firehose): each log event's message, and not a control message", () => {
    const a = auditEvent({ ...base, auditID: "cw-1" });
    const b = auditEvent({ ...base, auditID: "cw-2" });
    const message = {
      messageType: "DATA_MESSAGE",
      owner: "111111111111",
      logGroup: "/aws/eks/prod/cluster",
      logStream: "kube-apiserver-audit-0a1b2c",
      subscriptionFilters: ["audit-to-firehose"],
      logEvents: [
        { id: "1", timestamp: 1, message: JSON.stringify(a) },
        { id: "2", timestamp: 2, message: JSON.stringify(b) },
      ],
    };
    expect(eventsOf(message)?.map((e) => e.auditID)).toEqual(["cw-1", "cw-2"]);
    const control = {
      messageType: "CONTROL_MESSAGE",
      logGroup: "",
      logStream: "",
      logEvents: [{ id: "", timestamp: 1, message: "CWL CONTROL MESSAGE: Checking health of destination Firehose." }],
    };
    expect(eventsOf(control)).toBeNull();
  });

  it("reads an EventList batch as the webhook posts it", () => {
    const list = {
      kind: "EventList",
      apiVersion: "audit.k8s.io/v1",
      items: [auditEvent({ ...base, auditID: "b1" }), auditEvent({ ...base, auditID: "b2", stage: "RequestReceived" })],
    };
    expect(eventsOf(list)?.map((e) => e.auditID)).toEqual(["b1", "b2"]);
  });

  it("reads events a tool re-serialised without apiVersion, or without both type fields, keys sorted", () => {
    const event = auditEvent({ ...base, auditID: "sorted" }) as unknown as Record<string, unknown>;
    const sorted = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
    const { apiVersion: _apiVersion, ...withKind } = event;
    const { kind: _kind, ...bare } = withKind;
    for (const shape of [sorted(withKind), sorted(bare), withKind]) expect(request(JSON.stringify(shape)).key).toBe("sorted/ResponseComplete");
    // A batch without its type fields, as a receiver re-posted it.
    expect(eventsOf({ metadata: {}, items: [sorted(withKind), sorted(bare)] })?.length).toBe(2);
    expect(eventsOf({ kind: "EventList", items: [withKind] })?.length).toBe(1);
  });

  it("keeps counting as foreign what only looks like an event", () => {
    const event = auditEvent({ ...base }) as unknown as Record<string, unknown>;
    expect(readLine('{"kind":0}')).toEqual({ kind: "foreign" });
    // A core/v1 Event (kind Event, apiVersion v1) is not an audit event, whatever else it carries.
    expect(readLine(JSON.stringify({ ...event, apiVersion: "v1" }))).toEqual({ kind: "foreign" });
    expect(readLine(JSON.stringify({ kind: "Event", apiVersion: "v1", metadata: { name: "x" }, reason: "Pulled" }))).toEqual({ kind: "foreign" });
    // Without the request it describes (no requestURI, no objectRef), the three fields alone are not enough.
    const { requestURI: _uri, objectRef: _ref, apiVersion: _v, ...headless } = event;
    expect(readLine(JSON.stringify(headless))).toEqual({ kind: "foreign" });
    // A GKE Cloud Logging entry: audit data in another schema.
    expect(
      readLine(
        JSON.stringify({
          protoPayload: { "@type": "type.googleapis.com/google.cloud.audit.AuditLog", methodName: "io.k8s.core.v1.pods.create" },
          logName: "projects/p/logs/cloudaudit.googleapis.com%2Factivity",
        }),
      ),
    ).toEqual({ kind: "foreign" });
    expect(eventsOf({ items: [{ kind: "Pod" }] })).toBeNull();
  });

  it("tells blank, foreign and malformed lines apart", () => {
    expect(readLine("   ")).toEqual({ kind: "blank" });
    expect(readLine('{"level":"info","msg":"started"}')).toEqual({ kind: "foreign" });
    expect(readLine('{"properties":{"log":"not json"}}')).toEqual({ kind: "foreign" });
    expect(readLine("[1,2]")).toEqual({ kind: "foreign" });
    expect(readLine('{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":')).toMatchObject({ kind: "malformed" });
    expect(readLine("GET /healthz 200")).toMatchObject({ kind: "malformed" });
  });

  it("reads a 200 kB line", () => {
    const big = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big", namespace: "apps", resourceVersion: "9" },
      data: { blob: "x".repeat(200_000) },
    };
    const r = request(
      JSON.stringify(
        auditEvent({ ...base, verb: "update", resource: "configmaps", group: undefined, subresource: undefined, name: "big", responseObject: big }),
      ),
    );
    expect(r.response?.resourceVersion).toBe("9");
    expect((r.response?.object as { data: { blob: string } }).data.blob).toHaveLength(200_000);
  });

  it("takes a created object's name from the response (generateName), and ignores a Status response", () => {
    const created = request(
      JSON.stringify(
        auditEvent({
          ...base,
          verb: "create",
          name: undefined,
          subresource: undefined,
          responseObject: { kind: "HTTPRoute", metadata: { name: "gen-x7", resourceVersion: "3" } },
        }),
      ),
    );
    expect(created.name).toBe("gen-x7");
    const deleted = request(
      JSON.stringify(auditEvent({ ...base, verb: "delete", subresource: undefined, responseObject: { kind: "Status", status: "Success" } })),
    );
    expect(deleted.response).toBeUndefined();
  });

  it("writes microsecond timestamps the way the API server does (the fixtures' own check)", () => {
    expect(micro(T)).toBe("2026-11-29T10:00:00.123000Z");
  });
});
