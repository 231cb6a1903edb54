/**
 * A real Kubernetes control plane for tests: etcd and kube-apiserver (built by test/kube/build.sh) on
 * free loopback ports, with a static token file, the shipped audit policy writing both a log file and
 * the webhook backend, the Connector and HTTPRoute CRDs installed, and ways to compact etcd and restart
 * the API server on the same port.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { Agent, fetch } from "undici";
import { parse } from "yaml";
import { freePort, start, type Running } from "./processes";
import { ROOT } from "./root";

export const BUILD_HINT = "run `bash test/kube/build.sh` (needs Go; .ci/run does it)";

/** Where test/kube/build.sh put the binaries and the HTTPRoute CRD; fails saying what to run when they are missing. */
export function kubeBinaries(): { apiserver: string; etcd: string; httprouteCrd: string; crilog: string; apiload: string; connectorctl: string } {
  const dir = process.env.CHURNSCOPE_KUBE_BIN ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "churnscope", "kube");
  const found = {
    apiserver: join(dir, "kube-apiserver"),
    etcd: join(dir, "etcd"),
    httprouteCrd: join(dir, "httproutes.crd.yaml"),
    crilog: join(dir, "crilog"),
    apiload: join(dir, "apiload"),
    connectorctl: join(dir, "connectorctl"),
  };
  for (const path of Object.values(found)) if (!existsSync(path)) throw new Error(`${path} is missing: ${BUILD_HINT}`);
  return found;
}

/** A self-signed certificate for 127.0.0.1 (its own CA), as PEM files in `dir`. */
export function selfSignedCert(dir: string): { certFile: string; keyFile: string } {
  const certFile = join(dir, "tls.crt");
  const keyFile = join(dir, "tls.key");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "2",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  return { certFile, keyFile };
}

/** A user of the token file, in system:masters: each controller writes as its own user. */
/**
 * An audit policy file that logs every write at Metadata level (no bodies), as managed clusters log custom
 * resources, and no reads; one stage per request.
 */
export function metadataPolicyFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), "churnscope-policy-")), "policy.yaml");
  writeFileSync(
    path,
    [
      "apiVersion: audit.k8s.io/v1",
      "kind: Policy",
      'omitStages: ["RequestReceived"]',
      "rules:",
      "  - level: None",
      '    verbs: ["get", "list", "watch"]',
      "  - level: Metadata",
      "",
    ].join("\n"),
  );
  return path;
}

/** A kubeconfig file for the dashboard that reaches `server` (the API server, or a proxy in front of it) with `token`. */
export function kubeconfigFile(server: string, token: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "churnscope-kubeconfig-")), "config");
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "test", cluster: { server, "insecure-skip-tls-verify": true } }],
      users: [{ name: "admin", user: { token } }],
      contexts: [{ name: "test", context: { cluster: "test", user: "admin" } }],
      "current-context": "test",
    }),
  );
  return file;
}

export interface ControlPlaneUser {
  name: string;
  token: string;
}

export interface ControlPlaneOptions {
  /**
   * Churnscope's webhook URL (…/api/audit/webhook/<cluster>), its token, and the certificate it serves
   * https with: the API server sends the token only over https. None: the log file only.
   */
  webhook?: { url: string; token: string; caFile?: string };
  /** extra users besides the admin */
  users?: ControlPlaneUser[];
  /** e.g. "WatchList=false" */
  featureGates?: string;
  /** an audit policy file instead of the shipped one (deploy/audit/audit-policy.yaml) */
  auditPolicy?: string;
}

export interface ControlPlane {
  url: string;
  adminToken: string;
  auditLogPath: string;
  kubeConfig(user?: ControlPlaneUser): KubeConfig;
  /** GET on the API server as the admin (TLS not verified: its certificate is self-signed) */
  get(path: string): Promise<{ status: number; body: string }>;
  /** a JSON merge patch as the admin, e.g. with ?dryRun=All */
  mergePatch(path: string, patch: unknown): Promise<{ status: number; body: string }>;
  /** installs CRDs (YAML files) and resolves once each is served */
  installCrds(yamlPaths: string[]): Promise<void>;
  /** compacts etcd at its current revision; resolves to that revision */
  compact(): Promise<number>;
  /** stops the API server (its webhook flushes) and starts it again on the same port */
  restartApiServer(): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, running: Running[], check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const r of running)
      if (r.child.exitCode !== null) throw new Error(`a control-plane process exited (${r.child.exitCode}) before ${what}:\n${r.output()}`);
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms:\n${running.map((r) => r.output().slice(-4000)).join("\n---\n")}`);
}

/** The project's Connector CRD (networking.datumapis.com/v1alpha1, status subresource) and the Gateway API's HTTPRoute CRD. */
function crds(httprouteCrd: string): V1CustomResourceDefinition[] {
  return [parse(readFileSync(join(ROOT, "test", "kube", "connector-crd.yaml"), "utf8")), parse(readFileSync(httprouteCrd, "utf8"))];
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const bins = kubeBinaries();
  const dir = mkdtempSync(join(tmpdir(), "churnscope-kube-"));
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const adminToken = `admin-${Math.random().toString(36).slice(2)}`;
  const users = options.users ?? [];
  writeFileSync(
    join(dir, "tokens.csv"),
    [`${adminToken},admin,1,"system:masters"`, ...users.map((u, i) => `${u.token},${u.name},${i + 2},"system:masters"`)].join("\n") + "\n",
  );
  execFileSync("openssl", ["genrsa", "-out", join(dir, "sa.key"), "2048"], { stdio: "ignore" });
  const auditLogPath = join(dir, "audit.log");
  const apiArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    `--secure-port=${apiPort}`,
    `--cert-dir=${join(dir, "certs")}`,
    `--token-auth-file=${join(dir, "tokens.csv")}`,
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${join(dir, "sa.key")}`,
    `--service-account-signing-key-file=${join(dir, "sa.key")}`,
    "--service-cluster-ip-range=10.96.0.0/24",
    "--authorization-mode=RBAC",
    // The tests compact etcd themselves, when they want a resume point gone.
    "--etcd-compaction-interval=0",
    `--audit-policy-file=${options.auditPolicy ?? join(ROOT, "deploy", "audit", "audit-policy.yaml")}`,
    `--audit-log-path=${auditLogPath}`,
    "--audit-log-maxsize=0",
  ];
  if (options.webhook) {
    writeFileSync(
      join(dir, "webhook.kubeconfig"),
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "churnscope",
            cluster: { server: options.webhook.url, ...(options.webhook.caFile ? { "certificate-authority": options.webhook.caFile } : {}) },
          },
        ],
        users: [{ name: "kube-apiserver", user: { token: options.webhook.token } }],
        contexts: [{ name: "churnscope", context: { cluster: "churnscope", user: "kube-apiserver" } }],
        "current-context": "churnscope",
      }),
    );
    apiArgs.push(`--audit-webhook-config-file=${join(dir, "webhook.kubeconfig")}`, "--audit-webhook-mode=batch", "--audit-webhook-batch-max-wait=1s");
  }
  if (options.featureGates) apiArgs.push(`--feature-gates=${options.featureGates}`);

  const etcd = start(bins.etcd, [
    `--data-dir=${join(dir, "etcd")}`,
    `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
    `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
    "--log-level=warn",
  ]);
  let apiserver: Running | undefined;
  const url = `https://127.0.0.1:${apiPort}`;
  const send = async (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) => {
    const res = await fetch(url + path, {
      ...init,
      headers: { Authorization: `Bearer ${adminToken}`, ...init.headers },
      dispatcher: insecure,
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, body: await res.text() };
  };
  const get = (path: string) => send(path);
  const mergePatch = (path: string, patch: unknown) =>
    send(path, { method: "PATCH", headers: { "Content-Type": "application/merge-patch+json" }, body: JSON.stringify(patch) });
  const startApiServer = async () => {
    apiserver = start(bins.apiserver, apiArgs);
    await until("the API server's /readyz answered 200", [etcd, apiserver], async () => (await get("/readyz")).status === 200, 120_000);
  };
  const stop = async () => {
    await apiserver?.stop();
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const kubeConfig = (user?: ControlPlaneUser) => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "test", server: url, skipTLSVerify: true }],
      users: [{ name: user?.name ?? "admin", token: user?.token ?? adminToken }],
      contexts: [{ name: "test", cluster: "test", user: user?.name ?? "admin" }],
      currentContext: "test",
    });
    return kc;
  };
  // Posted as written: client-node's typed client would drop the schema's `x-kubernetes-*` keys it does not map.
  const installCrds = async (definitions: V1CustomResourceDefinition[]) => {
    for (const crd of definitions) {
      const posted = await send("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(crd),
      });
      if (posted.status !== 201) throw new Error(`installing ${crd.metadata!.name}: HTTP ${posted.status} ${posted.body.slice(0, 500)}`);
    }
    for (const crd of definitions) {
      const plural = `/apis/${crd.spec.group}/${crd.spec.versions.find((v) => v.storage)!.name}/${crd.spec.names.plural}`;
      await until(`${crd.metadata!.name} was served`, [etcd, apiserver!], async () => (await get(plural)).status === 200);
    }
  };
  try {
    await until("etcd answered", [etcd], async () => (await fetch(`http://127.0.0.1:${etcdPort}/health`)).ok);
    await startApiServer();
    await installCrds(crds(bins.httprouteCrd));
  } catch (error) {
    await stop();
    throw error;
  }
  const etcdCall = async (path: string, body: unknown) => {
    const res = await fetch(`http://127.0.0.1:${etcdPort}${path}`, { method: "POST", body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as { header?: { revision?: string } };
  };
  return {
    url,
    adminToken,
    auditLogPath,
    kubeConfig,
    get,
    mergePatch,
    installCrds: (yamlPaths) => installCrds(yamlPaths.map((path) => parse(readFileSync(path, "utf8")) as V1CustomResourceDefinition)),
    async compact() {
      const revision = Number((await etcdCall("/v3/kv/range", { key: Buffer.from("/").toString("base64") })).header?.revision);
      await etcdCall("/v3/kv/compaction", { revision: String(revision), physical: true });
      return revision;
    },
    async restartApiServer() {
      await apiserver?.stop();
      await startApiServer();
    },
    output: () => `${etcd.output()}\n---\n${apiserver?.output() ?? ""}`,
    stop,
  };
}
