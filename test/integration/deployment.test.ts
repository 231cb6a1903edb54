/**
 * Deploying Churnscope: the kustomize base renders (kubectl kustomize) into least-privilege
 * manifests that match the shipped profiles, and the standalone build the Dockerfile packages
 * starts with the image's command (`node start.cjs`, `npm start` bundled), answers its probes, answers
 * panels before Next's routing, shows the embedded replay, opens SQLite, and serves the audit webhook over
 * https when the config file sets server.tls.
 * (No container engine runs on the test machines, so the image itself is not built here.)
 */
import Database from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { loadConfig } from "@/lib/config/load";
import { configSchema } from "@/lib/config/schema";
import { answeredBeforeNext, spoolDrained, writeConfig } from "../helpers/app";
import { auditEvent } from "../helpers/audit-log";
import { selfSignedCert, startControlPlane, type ControlPlane } from "../helpers/control-plane";
import { freePort, requireBinary, start, waitForHttp, type Running } from "../helpers/processes";
import { fillLiveStore, LIVE_DAY0, liveDaysRolledUp } from "../helpers/live-store";
import { ROOT } from "../helpers/root";
import { toolBinary } from "../helpers/tools";

const WEBHOOK_TOKEN = "image-webhook-token";

/** A POST over https that trusts only `ca`, as the API server's webhook client does. */
function httpsPost(url: string, body: string, ca: Buffer, token: string | null): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", ca, headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) } },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

type Doc = { kind: string; metadata: { name: string; namespace?: string }; [key: string]: unknown };

/** The two ways the project ships its objects, rendered as a cluster would receive them. */
const RENDERINGS = [
  {
    name: "the kustomize base",
    render: () =>
      spawnSync(requireBinary("kubectl", "install it: apt-get install -y kubernetes-client"), ["kustomize", join(ROOT, "deploy/kubernetes/base")], {
        encoding: "utf8",
      }),
    // kustomize makes the namespace; Helm installs into one that exists (helm install --create-namespace).
    kinds: ["Namespace"],
  },
  { name: "the Helm chart", render: () => helmTemplate([]), kinds: [] },
];

function helmTemplate(args: string[]) {
  return spawnSync(toolBinary("helm"), ["template", "churnscope", join(ROOT, "deploy/helm/churnscope"), "--namespace", "churnscope", ...args], {
    encoding: "utf8",
  });
}

const docsOf = (stdout: string) =>
  parseAllDocuments(stdout)
    .map((d) => d.toJS() as Doc)
    .filter((d) => d !== null);

describe.each(RENDERINGS)("$name", ({ render, kinds }) => {
  const rendered = render();
  const docs = rendered.status === 0 ? docsOf(rendered.stdout) : [];
  // A rendered object of a kind, read by path in the tests below.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered manifests, checked field by field
  const one = (kind: string) => docs.find((d) => d.kind === kind) as Doc & Record<string, any>;

  it("renders every object Churnscope needs in its namespace", () => {
    expect(rendered.status, rendered.stderr).toBe(0);
    expect(docs.map((d) => d.kind).sort()).toEqual(
      [...kinds, "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment", "PersistentVolumeClaim", "Service", "ServiceAccount"].sort(),
    );
    for (const d of docs) if (!["Namespace", "ClusterRole", "ClusterRoleBinding"].includes(d.kind)) expect(d.metadata.namespace, d.kind).toBe("churnscope");
  });

  it("grants only list and watch, on exactly the resources the shipped profiles record", () => {
    const rules = one("ClusterRole").rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    for (const rule of rules) expect(rule.verbs.sort()).toEqual(["list", "watch"]);
    const granted = new Set(rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${res}.${g}`))));
    expect([...granted].sort()).toEqual([...new Set(DEFAULT_PROFILES.map((p) => `${p.resource}.${p.group}`))].sort());
    const binding = one("ClusterRoleBinding");
    expect(binding.roleRef.name).toBe(one("ClusterRole").metadata.name);
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: one("ServiceAccount").metadata.name, namespace: "churnscope" }]);
  });

  it("runs non-root on a read-only root filesystem, with probes, the store on the claim and a valid configuration", () => {
    const pod = one("Deployment").spec.template.spec;
    const [container] = pod.containers;
    expect(pod.serviceAccountName).toBe(one("ServiceAccount").metadata.name);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    expect(container.readinessProbe.httpGet.path).toBe("/readyz");
    expect(container.livenessProbe.httpGet.path).toBe("/healthz");
    const volumes = Object.fromEntries(pod.volumes.map((v: { name: string }) => [v.name, v]));
    const mounts = Object.fromEntries(container.volumeMounts.map((m: { mountPath: string; name: string }) => [m.mountPath, m.name]));
    expect(volumes[mounts["/data"]].persistentVolumeClaim.claimName).toBe(one("PersistentVolumeClaim").metadata.name);
    const configMap = one("ConfigMap");
    expect(volumes[mounts["/etc/churnscope"]].configMap.name).toBe(configMap.metadata.name);
    const env = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    expect(env.CHURNSCOPE_CONFIG).toBe("/etc/churnscope/churnscope.yaml");
    const parsed = configSchema.safeParse(parseAllDocuments(configMap.data["churnscope.yaml"])[0].toJS());
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(one("Service").spec.selector).toEqual(one("Deployment").spec.selector.matchLabels);
  });
});

describe("the Helm chart's values", () => {
  it("passes helm lint", () => {
    const lint = spawnSync(toolBinary("helm"), ["lint", join(ROOT, "deploy/helm/churnscope")], { encoding: "utf8" });
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
  });

  it("turn every setting into a configuration Churnscope accepts, with secrets by reference and the webhook's TLS mounted", () => {
    const rendered = helmTemplate([
      ...["--set", "prometheus.url=https://vm.monitoring:8428", "--set", "prometheus.flavor=victoriametrics"],
      ...["--set", "prometheus.bearerTokenSecret.name=prom-token", "--set", "auth.userHeader=X-Forwarded-User"],
      ...["--set", "auth.bearerTokenSecret.name=api-token", "--set", "audit.webhook.tokenSecret.name=webhook-token"],
      ...["--set", "audit.webhook.tlsSecret=webhook-tls", "--set", "apiservers.project[0]=milo-apiserver", "--set", "config.siteLabel=site"],
      ...["--set", "store.persistence.enabled=false"],
    ]);
    expect(rendered.status, rendered.stderr).toBe(0);
    const docs = docsOf(rendered.stdout);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered manifests, checked field by field
    const one = (kind: string) => docs.find((d) => d.kind === kind) as Doc & Record<string, any>;
    const config = parseAllDocuments(one("ConfigMap").data["churnscope.yaml"])[0].toJS();
    const parsed = configSchema.safeParse(config);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(config).toMatchObject({
      prometheus: { url: "https://vm.monitoring:8428", flavor: "victoriametrics", bearerToken: { env: "PROMETHEUS_BEARER_TOKEN" } },
      auth: { userHeader: "X-Forwarded-User", bearerToken: { env: "CHURNSCOPE_BEARER_TOKEN" } },
      audit: { webhookToken: { env: "AUDIT_WEBHOOK_TOKEN" } },
      server: { tls: { port: 3443, certFile: "/etc/churnscope/tls/tls.crt", keyFile: "/etc/churnscope/tls/tls.key" } },
      apiservers: { project: ["milo-apiserver"] },
      siteLabel: "site",
    });
    const pod = one("Deployment").spec.template.spec;
    const [container] = pod.containers;
    const secretEnv = Object.fromEntries(
      container.env
        .filter((e: { valueFrom?: unknown }) => e.valueFrom)
        .map((e: { name: string; valueFrom: { secretKeyRef: { name: string } } }) => [e.name, e.valueFrom.secretKeyRef.name]),
    );
    expect(secretEnv).toEqual({ PROMETHEUS_BEARER_TOKEN: "prom-token", CHURNSCOPE_BEARER_TOKEN: "api-token", AUDIT_WEBHOOK_TOKEN: "webhook-token" });
    const volumes = Object.fromEntries(pod.volumes.map((v: { name: string }) => [v.name, v]));
    const mounts = Object.fromEntries(container.volumeMounts.map((m: { mountPath: string; name: string }) => [m.mountPath, m.name]));
    expect(volumes[mounts["/etc/churnscope/tls"]].secret.secretName).toBe("webhook-tls");
    expect(volumes[mounts["/data"]]).toEqual({ name: "data", emptyDir: {} });
    expect(docs.some((d) => d.kind === "PersistentVolumeClaim")).toBe(false);
    expect(one("Service").spec.ports.map((p: { name: string; port: number }) => [p.name, p.port])).toEqual([
      ["http", 80],
      ["webhook", 3443],
    ]);
    // Nothing secret is written into the manifests themselves.
    expect(rendered.stdout).not.toMatch(/Bearer |password/i);
  });

  it("reads an audit bucket with keys from a Secret or with the pod's role, beside the webhook", () => {
    const values = join(mkdtempSync(join(tmpdir(), "churnscope-values-")), "values.yaml");
    writeFileSync(
      values,
      [
        "serviceAccount:",
        '  annotations: { eks.amazonaws.com/role-arn: "arn:aws:iam::123456789012:role/churnscope-audit" }',
        "extraEnv:",
        "  - name: AUDIT_S3_KEY",
        "    valueFrom: { secretKeyRef: { name: audit-bucket, key: access-key-id } }",
        "  - name: AUDIT_S3_SECRET",
        "    valueFrom: { secretKeyRef: { name: audit-bucket, key: secret-access-key } }",
        "config:",
        "  audit:",
        "    sources:",
        "      - name: eks-prod",
        "        s3: { bucket: eks-audit, prefix: AWSLogs/, accessKeyId: { env: AUDIT_S3_KEY }, secretAccessKey: { env: AUDIT_S3_SECRET } }",
        "      - name: eks-staging",
        "        s3: { bucket: eks-audit-staging }",
      ].join("\n"),
    );
    const rendered = helmTemplate(["-f", values, "--set", "audit.webhook.tokenSecret.name=webhook-token"]);
    expect(rendered.status, rendered.stderr).toBe(0);
    const docs = docsOf(rendered.stdout);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered manifests, checked field by field
    const one = (kind: string) => docs.find((d) => d.kind === kind) as Doc & Record<string, any>;
    const config = parseAllDocuments(one("ConfigMap").data["churnscope.yaml"])[0].toJS();
    expect(configSchema.safeParse(config).success).toBe(true);
    expect(config.audit.webhookToken).toEqual({ env: "AUDIT_WEBHOOK_TOKEN" });
    expect(config.audit.sources.map((source: { name: string }) => source.name)).toEqual(["eks-prod", "eks-staging"]);
    const env = one("Deployment").spec.template.spec.containers[0].env as { name: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
    expect(env.filter((e) => e.name.startsWith("AUDIT_S3_")).map((e) => [e.name, e.valueFrom?.secretKeyRef.key])).toEqual([
      ["AUDIT_S3_KEY", "access-key-id"],
      ["AUDIT_S3_SECRET", "secret-access-key"],
    ]);
    expect((one("ServiceAccount").metadata as { annotations?: unknown }).annotations).toEqual({
      "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/churnscope-audit",
    });
  });

  it("refuses values the dashboard cannot run with, saying which", () => {
    // More than one replica is refused on the SQLite store only.
    expect(helmTemplate(["--set", "replicas=3", "--set", "store.postgres.urlSecret.name=db"]).status).toBe(0);
    for (const [set, message] of [
      ["replicas=2", /\/replicas': maximum: got 2, want 1/],
      ["prometheus.flavor=graphite", /\/prometheus\/flavor': value must be one of/],
      ["prometheus.url=ftp://x", /\/prometheus\/url'/],
      ["audit.webhook.tlsPort=3000", /\/audit\/webhook\/tlsPort'/],
      ["store.persistence.size=lots", /\/store\/persistence\/size'/],
    ] as const) {
      const rendered = helmTemplate(["--set", set]);
      expect(rendered.status, set).not.toBe(0);
      expect(rendered.stderr, set).toMatch(message);
    }
  });
});

/** Several replicas on one PostgreSQL database: the kustomize overlay, and the chart with the database's Secret. */
const HA_RENDERINGS = [
  {
    name: "the kustomize overlay postgres-ha",
    render: () =>
      spawnSync(
        requireBinary("kubectl", "install it: apt-get install -y kubernetes-client"),
        ["kustomize", join(ROOT, "deploy/kubernetes/overlays/postgres-ha")],
        {
          encoding: "utf8",
        },
      ),
  },
  {
    name: "the Helm chart with store.postgres",
    render: () => helmTemplate(["--set", "replicas=2", "--set", "store.postgres.urlSecret.name=churnscope-database"]),
  },
];

describe.each(HA_RENDERINGS)("$name", ({ render }) => {
  it("runs two replicas on the database from a Secret, replaced one at a time, one kept through a drain, and no claim", () => {
    const rendered = render();
    expect(rendered.status, rendered.stderr).toBe(0);
    const docs = docsOf(rendered.stdout);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered manifests, checked field by field
    const one = (kind: string) => docs.find((d) => d.kind === kind) as Doc & Record<string, any>;
    expect(docs.some((d) => d.kind === "PersistentVolumeClaim")).toBe(false);
    const deployment = one("Deployment");
    expect([deployment.spec.replicas, deployment.spec.strategy.type]).toEqual([2, "RollingUpdate"]);
    const pod = deployment.spec.template.spec;
    const url = (pod.containers[0].env as { name: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[]).find(
      (e) => e.name === "CHURNSCOPE_DATABASE_URL",
    );
    expect(url?.valueFrom?.secretKeyRef).toEqual({ name: "churnscope-database", key: "url" });
    expect((pod.volumes as { name: string; emptyDir?: object; persistentVolumeClaim?: object }[]).find((v) => v.name === "data")).toEqual({
      name: "data",
      emptyDir: {},
    });
    const pdb = one("PodDisruptionBudget");
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toMatchObject(deployment.spec.selector.matchLabels);
    // The configuration the pod reads names PostgreSQL, through that variable or by its presence.
    const config = parseAllDocuments(one("ConfigMap").data["churnscope.yaml"])[0].toJS() ?? {};
    expect(configSchema.safeParse(config).success).toBe(true);
    const loaded = loadConfig({ CHURNSCOPE_CONFIG: writeConfig(JSON.stringify(config)), CHURNSCOPE_DATABASE_URL: "postgres://u:p@db/churnscope" }, ROOT);
    expect(loaded.store.engine).toBe("postgres");
  });
});

describe("the manifests applied to a real API server (server-side dry run)", () => {
  let plane: ControlPlane | undefined;
  afterAll(async () => {
    await plane?.stop();
  });

  it("accepts the kustomize base and the Helm chart's output as they are", async () => {
    plane = await startControlPlane();
    const kubectl = requireBinary("kubectl", "install it: apt-get install -y kubernetes-client");
    const connection = ["--server", plane.url, "--token", plane.adminToken, "--insecure-skip-tls-verify"];
    const run = (args: string[], input?: string) => spawnSync(kubectl, [...connection, ...args], { encoding: "utf8", input });
    // The chart installs into a namespace that exists; the base's own Namespace is dry-run with the rest.
    expect(run(["create", "namespace", "churnscope"]).status).toBe(0);
    for (const rendered of [
      RENDERINGS[0].render(),
      helmTemplate([]),
      helmTemplate(["--set", "audit.webhook.tlsSecret=webhook-tls", "--set", "store.persistence.enabled=false"]),
      HA_RENDERINGS[0].render(),
      HA_RENDERINGS[1].render(),
    ]) {
      expect(rendered.status, rendered.stderr).toBe(0);
      const applied = run(["apply", "--server-side", "--dry-run=server", "--validate=strict", "--field-manager=churnscope-test", "-f", "-"], rendered.stdout);
      expect(applied.status, applied.stderr).toBe(0);
      const kinds = docsOf(rendered.stdout).map((d) => d.kind);
      for (const kind of kinds) expect(applied.stdout.toLowerCase(), kind).toContain(`${kind.toLowerCase()}`);
      expect(applied.stdout).toMatch(/serverside-applied \(server dry run\)/);
    }
  }, 180_000);
});

describe("the standalone build in the image", () => {
  let server: Running | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it("starts with the image's command (node start.cjs), passes its probes, answers panels before Next, shows the replay, stores notes in SQLite, rolls up a live store and takes the webhook over https", async () => {
    // `npm test` builds the app as the Dockerfile does (CHURNSCOPE_STANDALONE=1 npm run build: the app, then the
    // replay's object store, copied into the standalone output); the image's own step after it is run here.
    const app = join(ROOT, ".next", "standalone");
    expect(
      existsSync(join(app, "server.js")),
      "no standalone build in .next: build as the image does, CHURNSCOPE_STANDALONE=1 npm run build (npm test does)",
    ).toBe(true);
    const bundle = spawnSync(process.execPath, [join(ROOT, "deploy/image/bundle-start.mjs")], { cwd: ROOT, encoding: "utf8" });
    expect(bundle.status, bundle.stderr).toBe(0);
    // What the Dockerfile copies: the standalone server, and the static assets beside it.
    cpSync(join(ROOT, ".next", "static"), join(app, ".next", "static"), { recursive: true });
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/COPY --from=build \/src\/\.next\/standalone \.\/\nCOPY --from=build \/src\/\.next\/static \.\/\.next\/static/);
    expect(dockerfile).toMatch(/^RUN npm run build && node deploy\/image\/bundle-start\.mjs$/m);
    expect(dockerfile).toMatch(/^CMD \["node", "start\.cjs"\]$/m);
    // The build put it there (outputFileTracingIncludes); the Dockerfile copies nothing else.
    expect(existsSync(join(app, "serve.cjs"))).toBe(true);
    // Only what the server runs: the file tracer once took the whole checkout (tests, docs, sources) for the image.
    for (const left of ["test", "docs", "components", "app", "deploy", "README.md"]) expect(existsSync(join(app, left)), left).toBe(false);

    const [port, tlsPort] = [await freePort(), await freePort()];
    const dataDir = mkdtempSync(join(tmpdir(), "churnscope-standalone-"));
    const tls = selfSignedCert(mkdtempSync(join(tmpdir(), "churnscope-standalone-tls-")));
    const config = writeConfig(
      [
        `server: { port: ${port}, host: 127.0.0.1, tls: { port: ${tlsPort}, certFile: ${tls.certFile}, keyFile: ${tls.keyFile} } }`,
        `audit: { webhookToken: { env: AUDIT_TOKEN } }`,
      ].join("\n"),
    );
    // A live store from before (a recorder's, say): the image's own roll-up thread must find and roll it.
    await fillLiveStore(dataDir, 2);
    const env = {
      PATH: process.env.PATH,
      CHURNSCOPE_CONFIG: config,
      AUDIT_TOKEN: WEBHOOK_TOKEN,
      CHURNSCOPE_DATA_DIR: dataDir,
      NEXT_TELEMETRY_DISABLED: "1",
    };
    server = start(process.execPath, ["start.cjs"], { cwd: app, env: env as unknown as NodeJS.ProcessEnv });
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, server, 60_000);
    const ready = await fetch(`${url}/readyz`);
    expect(await ready.json()).toEqual({ ready: true, checks: { config: "ok", dataDir: "writable", store: "open", source: "embedded replay" } });
    const home = await fetch(`${url}/`, { redirect: "manual" });
    expect(home.headers.get("location")).toMatch(/\?snapshot=replay&from=/);
    const page = await fetch(`${url}${home.headers.get("location")}`);
    expect(page.status).toBe(200);
    const css = /href="(\/_next\/static\/[^"]+\.css)"/.exec(await page.text())?.[1];
    expect(css && (await fetch(`${url}${css}`)).status).toBe(200);
    const panelResponse = await fetch(`${url}/api/panels/lease-renewals?snapshot=replay&from=1788912000000&to=1789279200000`);
    expect(answeredBeforeNext(panelResponse)).toBe(true);
    const panel = await panelResponse.json();
    expect(panel.status).toBe("success");
    const note = await fetch(`${url}/api/notes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ timeMs: 1789130000000, text: "from the image" }),
    });
    expect(note.status).toBe(200);
    const objects = await (await fetch(`${url}/api/objects?snapshot=replay&from=1788912000000&to=1789279200000&kind=Connector`)).json();
    expect(objects.status, JSON.stringify(objects)).toBe("success");
    expect(objects.data.total).toBeGreaterThan(0);
    // The replay's object store is the build's, copied into the volume, not built on that first visit.
    const replayStore = new Database(join(dataDir, "snapshots", "replay.sqlite"), { readonly: true });
    expect(replayStore.prepare("SELECT value FROM meta WHERE key = 'built'").get()).toEqual({ value: "at build time" });
    replayStore.close();
    expect((await fetch(`${url}/api/objects?from=${LIVE_DAY0}&to=${LIVE_DAY0 + 2 * 86_400_000}`)).status).toBe(200);
    const deadline = Date.now() + 30_000;
    while (liveDaysRolledUp(dataDir) < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(liveDaysRolledUp(dataDir), server.output()).toBe(2);

    // The API server's audit webhook, over https on server.tls's port: with its token only.
    const ca = readFileSync(tls.certFile);
    const batch = JSON.stringify({
      kind: "EventList",
      apiVersion: "audit.k8s.io/v1",
      metadata: {},
      items: [auditEvent({ verb: "update", resource: "configmaps", namespace: "kube-system", name: "c", user: "image-user", receivedMs: Date.now() - 60_000 })],
    });
    const post = (token: string | null) => httpsPost(`https://127.0.0.1:${tlsPort}/api/audit/webhook/prod`, batch, ca, token);
    expect((await post(null)).status).toBe(401);
    const accepted = await post(WEBHOOK_TOKEN);
    expect(accepted.status, accepted.body).toBe(200);
    expect(JSON.parse(accepted.body).data).toMatchObject({ cluster: "prod", queued: { batches: 1 } });
    // The image's spool thread takes it into the store.
    await spoolDrained(url);
    const clients = await (await fetch(`${url}/api/clients?from=${Date.now() - 3_600_000}&to=${Date.now()}`)).json();
    expect(clients.data.clients.map((c: { user: string; writes: number }) => [c.user, c.writes])).toEqual([["image-user", 1]]);
  }, 240_000);
});
