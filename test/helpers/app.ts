/**
 * Starts the dashboard exactly as `npm start` does (config validation, then serve.cjs) on a free
 * loopback port. Needs a production build: `npm test` runs `next build` first.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, start, waitForHttp, type Running } from "./processes";
import { ROOT } from "./root";

export interface TestApp {
  url: string;
  running: Running;
  stop: () => Promise<void>;
}

/** A snapshot bundle uploaded as the page's "Open snapshot…" sends it. */
export function uploadSnapshot(baseUrl: string, body: BodyInit, init: RequestInit = {}): Promise<Response> {
  return fetch(`${baseUrl}/api/snapshots`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body, ...init });
}

/** An audit log uploaded as the Clients page's upload sends it, into the live store. */
export function uploadAudit(baseUrl: string, body: BodyInit, cluster = "default"): Promise<Response> {
  return fetch(`${baseUrl}/api/audit/uploads?cluster=${cluster}`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body });
}

/** Writes a churnscope.yaml into a fresh temporary folder and returns its path. */
export function writeConfig(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), "churnscope-config-"));
  const path = join(dir, "churnscope.yaml");
  writeFileSync(path, yaml);
  return path;
}

export function testEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const cleanEnv: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
  // The outer environment must not leak into a test's configuration.
  for (const key of ["PROMETHEUS_URL", "CHURNSCOPE_CONFIG", "CHURNSCOPE_DATA_DIR", "PORT", "KUBECONFIG", "KUBERNETES_SERVICE_HOST"]) delete cleanEnv[key];
  for (const [key, value] of Object.entries(env)) if (value !== undefined) cleanEnv[key] = value;
  cleanEnv.CHURNSCOPE_DATA_DIR ??= mkdtempSync(join(tmpdir(), "churnscope-data-"));
  return cleanEnv;
}

export function startCommand(env: Record<string, string | undefined>): Running {
  return start(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "lib", "cli", "start.ts")], {
    cwd: ROOT,
    env: testEnv(env),
  });
}

/** Next's own server (`next start`) without serve.cjs in front: only to compare the two. */
export function nextStartCommand(env: Record<string, string | undefined>): Running {
  const next = join(ROOT, "node_modules", "next", "dist", "bin", "next");
  return start(process.execPath, [next, "start", "--port", env.PORT ?? "3000", "--hostname", "127.0.0.1"], { cwd: ROOT, env: testEnv(env) });
}

export async function startApp(
  env: Record<string, string | undefined>,
  launch: (env: Record<string, string | undefined>) => Running = startCommand,
): Promise<TestApp> {
  if (!existsSync(join(ROOT, ".next", "BUILD_ID"))) throw new Error("no production build: run `npm run build` first (`npm test` does)");
  // A port chosen beforehand (PORT) lets a test point an API server's audit webhook at the app before it starts.
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const running = launch({ ...env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/healthz`, running, 60_000);
  } catch (error) {
    await running.stop();
    throw error;
  }
  return { url, running, stop: () => running.stop() };
}

/** Resident memory of an app's whole process group (the start script, the server, its threads), in MiB. */
export function rssMiB(app: TestApp): number {
  const out = execFileSync("ps", ["-o", "rss=", "-g", String(app.running.child.pid)], { encoding: "utf8" });
  return (
    out
      .split("\n")
      .filter(Boolean)
      .reduce((sum, kb) => sum + Number(kb), 0) / 1024
  );
}

/** Whether serve.cjs answered an API request before Next's routing (lib/server/node-api.ts), not Next's catch-all route. */
export function answeredBeforeNext(response: Response): boolean {
  return /^api;dur=\d+(\.\d)?$/.test(response.headers.get("server-timing") ?? "");
}

/** Resolves once the app's audit webhook spool is empty (its /metrics says so): every batch it answered is stored. */
export async function spoolDrained(baseUrl: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
    if (/^churnscope_audit_spool_batches(\{\})? 0$/m.test(metrics)) return;
    if (Date.now() > deadline)
      throw new Error(
        `the audit spool did not drain within ${timeoutMs} ms:\n${metrics
          .split("\n")
          .filter((l) => l.includes("spool"))
          .join("\n")}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `npm run ingest` of one log file into a store of its own: the store's directory, and what the command printed. */
export function ingestInto(path: string, cluster: string): { dataDir: string; output: string } {
  const dataDir = mkdtempSync(join(tmpdir(), "churnscope-ingest-"));
  const run = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "lib", "cli", "ingest.ts"), "--cluster", cluster, path],
    {
      cwd: ROOT,
      env: { ...process.env, CHURNSCOPE_DATA_DIR: dataDir, CHURNSCOPE_CONFIG: writeConfig("") },
      encoding: "utf8",
    },
  );
  if (run.status !== 0) throw new Error(`npm run ingest ${path} exited ${run.status}:\n${run.stderr}`);
  return { dataDir, output: run.stdout };
}
