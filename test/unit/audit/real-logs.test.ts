/**
 * Real third-party audit logs (../shared/fixtures/audit-logs, with their provenance) give exactly the
 * counts that an independent reading of the raw bytes gives (test/helpers/count_audit.py, standard library only).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ingestFile } from "@/lib/audit/files";
import { AuditIngester } from "@/lib/audit/ingest";
import { traitsOf } from "@/lib/churn/conditions";
import { DEFAULT_PROFILES, type Profile } from "@/lib/churn/profiles";
import { WriteStore } from "@/lib/store/store";
import { ROOT } from "../../helpers/root";
import { sharedData } from "../../helpers/shared-data";

/** A log by its path under ../shared/fixtures/audit-logs, or one this project's own rig recorded by its path in the repository. */
const fixture = (name: string) => (name.startsWith("test/") ? join(ROOT, name) : sharedData(join("fixtures", "audit-logs", name)));
const COUNT_AUDIT = join(ROOT, "test", "helpers", "count_audit.py");

/**
 * The profiled kinds: each with what it routes on twice, as a JSONPath for the ingester and in count_audit.py's own
 * path syntax, so that each reads it with its own code.
 */
const KINDS: { group: string; resource: string; kind: string; routed: string; countPath: string }[] = [
  { group: "rbac.authorization.k8s.io", resource: "roles", kind: "Role", routed: "$.rules", countPath: "rules" },
  { group: "rbac.authorization.k8s.io", resource: "rolebindings", kind: "RoleBinding", routed: "$.subjects", countPath: "subjects" },
  { group: "rbac.authorization.k8s.io", resource: "clusterroles", kind: "ClusterRole", routed: "$.rules", countPath: "rules" },
  { group: "", resource: "namespaces", kind: "Namespace", routed: "$.status.phase", countPath: "status.phase" },
  {
    group: "apps",
    resource: "deployments",
    kind: "Deployment",
    routed: "$.status.conditions[?(@.type==='Available')].status",
    countPath: "status.conditions[type=Available].status",
  },
  { group: "apps", resource: "replicasets", kind: "ReplicaSet", routed: "$.spec.replicas", countPath: "spec.replicas" },
  { group: "", resource: "pods", kind: "Pod", routed: "$.spec.nodeName", countPath: "spec.nodeName" },
  { group: "", resource: "nodes", kind: "Node", routed: "$.spec.unschedulable", countPath: "spec.unschedulable" },
  { group: "coordination.k8s.io", resource: "leases", kind: "Lease", routed: "$.spec.holderIdentity", countPath: "spec.holderIdentity" },
  {
    group: "apiextensions.k8s.io",
    resource: "customresourcedefinitions",
    kind: "CustomResourceDefinition",
    routed: "$.status.conditions[?(@.type==='Established')].status",
    countPath: "status.conditions[type=Established].status",
  },
  { group: "gateway.networking.k8s.io", resource: "httproutes", kind: "HTTPRoute", routed: "$.spec.rules", countPath: "spec.rules" },
];

const PROFILES: Profile[] = KINDS.map(({ group, resource, kind, routed }) => ({
  ...DEFAULT_PROFILES[0],
  name: resource,
  group,
  version: "v1",
  resource,
  kind,
  source: { path: "$" },
  routed: { routed: { path: routed } },
}));

/** The independent reading: count_audit.py over the raw files, for the same profiled kinds. */
function independentCount(files: string[]): { counts: Record<string, number>; writes: Record<string, Record<string, Record<string, number>>> } {
  const args = KINDS.flatMap((k) => ["--profile", `${k.group ? `${k.resource}.${k.group}` : k.resource}=${k.kind}`, "--routed", `${k.kind}=${k.countPath}`]);
  const run = spawnSync("python3", [COUNT_AUDIT, ...args, ...files], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw new Error(`these tests need python3 on the PATH to count the fixtures independently: ${run.error.message}`);
  if (run.status !== 0) throw new Error(`count_audit.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

async function ingest(files: string[]) {
  const store = await WriteStore.open(join(mkdtempSync(join(tmpdir(), "churnscope-real-")), "s.sqlite"));
  const ingester = new AuditIngester(store, "real", PROFILES);
  for (const file of files) await ingestFile(ingester, file);
  await ingester.flush();
  const writes: Record<string, Record<string, Record<string, number>>> = {};
  const rows = await store.database
    .sql()
    .all<{ kind: string; namespace: string; name: string; verb: string; class: string; n: number }>(
      "SELECT o.kind, o.namespace, o.name, w.verb, w.class, COUNT(*) AS n FROM writes w JOIN objects o ON o.id = w.object_id GROUP BY 1, 2, 3, 4, 5",
    );
  for (const r of rows) ((writes[`${r.kind}/${r.namespace}/${r.name}`] ??= {})[r.verb] ??= {})[r.class] = r.n;
  await store.close();
  return { counts: ingester.counts, writes };
}

/** Each case: what it exercises, its files, and whether any of its writes are to a profiled kind (else: none is stored). */
const CASES: [string, string[], boolean][] = [
  ["audit2rbac's 2017 v1beta1 Metadata log", ["audit2rbac-demo-excerpt.log"], true],
  ["the same log read twice (every request a duplicate the second time)", ["audit2rbac-demo-excerpt.log", "audit2rbac-demo-excerpt.log"], true],
  [
    "Falco's re-serialised traces without apiVersion, and a foreign line",
    [
      "falco/minikube_creates_namespace_foo.json",
      "falco/delete_namespace_foo.json",
      "falco/modify_cluster_role_node_problem_detector.json",
      "falco/fal_01_003.json",
    ],
    true,
  ],
  [
    "AKS diagnostic records (a kube-audit event in properties.log, and a controller-manager line that is not one)",
    ["dynatrace/aks-diagnostic-records.log"],
    false,
  ],
  [
    "the same real lines as a container's output, cut into parts by containerd's own log writer, a klog line on stderr between two of them",
    ["containerd/audit-lines-in-parts.log"],
    true,
  ],
  [
    "the same container log read back by the kubelet's own reader, as kubectl logs --timestamps prints it",
    ["containerd/audit-lines-kubectl-logs-timestamps.log"],
    true,
  ],
  [
    "a real kube-apiserver's RequestResponse log, gzipped: controllers' status updates and conflicts, lease heartbeats, scale, binding and eviction writes answered with another kind, a server-side apply that creates and one that changes nothing, a CRD's lines over 200 KB",
    ["test/fixtures/audit-logs/kube-apiserver/audit.log.gz"],
    true,
  ],
  ["the same lines in Docker's json-file log, cut into parts by Docker's own log copier, a klog line on stderr", ["docker/audit-lines-json-file.log"], true],
  ["the same events as jq prints them, each over many lines", ["jq/audit-lines-pretty.json"], true],
  ["the same events in one array over many lines, as jq -s prints them", ["jq/audit-lines-slurped.json"], true],
  [
    "the same events run together on one line with nothing between them, as jq -j -c prints them and Firehose writes records",
    ["jq/audit-lines-run-together.json"],
    true,
  ],
];

describe("real audit logs", () => {
  for (const [label, names, storesWrites] of CASES) {
    it(`${label}: every count and every object's writes by verb and class as count_audit.py reads them`, async () => {
      const files = names.map(fixture);
      const expected = independentCount(files);
      const got = await ingest(files);
      for (const [key, value] of Object.entries(expected.counts)) expect([key, got.counts[key as keyof typeof got.counts]]).toEqual([key, value]);
      expect(got.writes).toEqual(expected.writes);
      expect(expected.counts.requests).toBeGreaterThan(0);
      expect(Object.keys(got.writes).length > 0).toBe(storesWrites);
    });
  }

  it("a container log of real lines gives every object the writes its lines give read plainly; kubectl's reading of it loses the line the other stream cut", async () => {
    const plain = await ingest(["audit2rbac-demo-excerpt.log", "falco/modify_cluster_role_node_problem_detector.json"].map(fixture));
    for (const file of ["containerd/audit-lines-in-parts.log", "docker/audit-lines-json-file.log"]) {
      const fromContainer = await ingest([fixture(file)]);
      expect(fromContainer.writes, file).toEqual(plain.writes);
      expect(fromContainer.counts, file).toMatchObject({ malformed: 0, foreign: 1, events: plain.counts.events + 1 });
    }
    // The kubelet writes each part as it reads it, both streams to one output: the klog line lands inside the Falco
    // line it was written between the parts of, whose two halves are a malformed line and a foreign one.
    const fromKubectl = await ingest([fixture("containerd/audit-lines-kubectl-logs-timestamps.log")]);
    const { "ClusterRole//system:node-problem-detector": lost, ...kept } = plain.writes;
    expect(lost).toBeDefined();
    expect(fromKubectl.writes).toEqual(kept);
    expect(fromKubectl.counts).toMatchObject({ malformed: 1, foreign: 1, events: plain.counts.events });
  });

  it("the same real events spread over lines, in one array, or run together give every object the writes one event per line gives", async () => {
    const plain = await ingest(["audit2rbac-demo-excerpt.log", "falco/modify_cluster_role_node_problem_detector.json"].map(fixture));
    for (const file of ["jq/audit-lines-pretty.json", "jq/audit-lines-slurped.json", "jq/audit-lines-run-together.json"]) {
      const printed = await ingest([fixture(file)]);
      expect(printed.writes, file).toEqual(plain.writes);
      expect(printed.counts, file).toMatchObject({ malformed: 0, foreign: 0, events: plain.counts.events, requests: plain.counts.requests });
    }
  });

  it("a real kube-apiserver's RequestResponse log: every controller's echoes and condition clocks, per kind, condition and writer, as count_clocks.py reads them", async () => {
    const file = fixture("test/fixtures/audit-logs/kube-apiserver/audit.log.gz");
    const resources = KINDS.map((k) => (k.group ? `${k.resource}.${k.group}` : k.resource));
    const run = spawnSync("python3", [join(ROOT, "test", "helpers", "count_clocks.py"), ...resources.flatMap((r) => ["--resource", r]), file], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.status !== 0) throw new Error(`count_clocks.py failed: ${run.stderr ?? run.error?.message}`);
    const truth = JSON.parse(run.stdout) as { writes: Record<string, { echo: number; clockOnly: number }>; clocks: Record<string, [number, number]> };
    const store = await WriteStore.open(join(mkdtempSync(join(tmpdir(), "churnscope-real-")), "s.sqlite"));
    const ingester = new AuditIngester(store, "real", PROFILES);
    await ingestFile(ingester, file);
    await ingester.flush();
    const { counts } = await store.traitCounts({ fromMs: 0, toMs: Date.parse("2100-01-01T00:00:00Z") });
    const keys = await store.database.keysOf(counts.map((c) => c.objectId));
    await store.close();
    const got: Record<string, [number, Set<string>]> = {};
    const echoes: Record<string, { echo: number; clockOnly: number }> = {};
    for (const c of counts) {
      const traits = traitsOf(c.traits);
      for (const { finding, type } of traits.clocks?.findings ?? []) {
        const entry = (got[[c.kind, type, finding, c.writer].join("|")] ??= [0, new Set()]);
        entry[0] += c.writes;
        entry[1].add(`${keys.get(c.objectId)!.namespace}/${keys.get(c.objectId)!.name}`);
      }
      const writer = (echoes[c.writer] ??= { echo: 0, clockOnly: 0 });
      if (traits.echo) writer.echo += c.writes;
      if (traits.clocks?.clockOnly) writer.clockOnly += c.writes;
    }
    expect(Object.fromEntries(Object.entries(got).map(([id, [writes, objects]]) => [id, [writes, objects.size]]))).toEqual(truth.clocks);
    const made = Object.fromEntries(
      Object.entries(truth.writes).flatMap(([user, w]) => (w.echo + w.clockOnly > 0 ? [[user, { echo: w.echo, clockOnly: w.clockOnly }]] : [])),
    );
    expect(Object.fromEntries(Object.entries(echoes).filter(([, w]) => w.echo + w.clockOnly > 0))).toEqual(made);
    // The log holds real findings to compare, not only empty sets.
    expect(Object.keys(truth.clocks).length).toBeGreaterThan(0);
  });
});
