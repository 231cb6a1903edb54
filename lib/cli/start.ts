/**
 * `npm start`, and the image's command (bundled as start.cjs): validate the configuration first, so a
 * bad value stops startup with a message that names the key, then run serve.cjs (Next, with panel
 * answers sent before Next's routing) on the configured port, and on server.tls's port over https.
 * Signals are passed on, so stopping this process stops the server too.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { loadConfig, type AppConfig } from "../config/load";

function describe(config: AppConfig): string {
  if (!config.prometheus) return "no Prometheus configured (the page explains how to connect one)";
  const url = new URL(config.prometheus.url);
  url.username = "";
  url.password = "";
  return `Prometheus ${url.origin}${url.pathname.replace(/\/$/, "")}`;
}

let config: AppConfig;
try {
  config = loadConfig();
  mkdirSync(config.dataDir, { recursive: true });
} catch (error) {
  console.error(`churnscope: ${(error as Error).message}`);
  process.exit(1);
}

if (!existsSync(join(process.env.CHURNSCOPE_DIST_DIR || ".next", "BUILD_ID"))) {
  // First start on a fresh checkout: build once (about 40 s) rather than fail, as `npm run build` does: the app, then the replay's object store.
  console.log("churnscope: no production build yet; running `npm run build` once");
  const resolve = createRequire(join(process.cwd(), "package.json")).resolve;
  const env = { NEXT_TELEMETRY_DISABLED: "1", ...process.env };
  for (const step of [
    [resolve("next/dist/bin/next"), "build"],
    [resolve("tsx/cli"), join("lib", "cli", "replay-store.ts")],
  ]) {
    if (spawnSync(process.execPath, step, { stdio: "inherit", env }).status !== 0) {
      console.error("churnscope: the build failed; see the output above");
      process.exit(1);
    }
  }
}

const { port, host, tls } = config.server;
console.log(
  `churnscope: configuration from ${config.source}; ${describe(config)}; listening on http://${host}:${port}${tls ? ` and https://${host}:${tls.port}` : ""}`,
);
const tlsEnv = tls ? { TLS_PORT: String(tls.port), TLS_CERT_FILE: tls.certFile, TLS_KEY_FILE: tls.keyFile } : {};
const child = spawn(process.execPath, ["serve.cjs"], { stdio: "inherit", env: { ...process.env, PORT: String(port), HOSTNAME: host, ...tlsEnv } });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
