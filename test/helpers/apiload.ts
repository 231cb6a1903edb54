/**
 * The unbounded-net write-up's components on a real control plane: `apiload` (test/kube/apiload, built by
 * test/kube/build.sh) sets up the six kinds, the agents' service accounts and a FlowSchema whose priority level rejects
 * past very few seats, then runs the controller and the agents, each a process serving client-go's own metrics.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { kubeBinaries, type ControlPlane } from "./control-plane";
import { freePort, start, type Running } from "./processes";

const run = promisify(execFile);

/** Every request at Metadata level, reads included, as real policies log them; each request's stages after it was received. */
export function readsPolicyFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), "churnscope-policy-")), "policy.yaml");
  writeFileSync(path, ["apiVersion: audit.k8s.io/v1", "kind: Policy", 'omitStages: ["RequestReceived"]', "rules:", "  - level: Metadata", ""].join("\n"));
  return path;
}

export interface ApiLoad {
  tokensFile: string;
  /** one phase of one role: resolves when it exited, with where its metrics were served */
  phase(options: { role: "controller" | "agents"; version: "v1" | "v2"; seconds: number; metricsPort: number; stormAt?: number; watchScale: number }): Running;
}

export async function setUpApiLoad(cp: ControlPlane, agents: number, agentShares = 1): Promise<ApiLoad> {
  const { apiload } = kubeBinaries();
  const tokensFile = join(mkdtempSync(join(tmpdir(), "churnscope-apiload-")), "tokens.json");
  await run(
    apiload,
    ["setup", "-server", cp.url, "-token", cp.adminToken, "-agents", String(agents), "-agent-shares", String(agentShares), "-out", tokensFile],
    {
      timeout: 180_000,
    },
  );
  return {
    tokensFile,
    phase: ({ role, version, seconds, metricsPort, stormAt, watchScale }) =>
      start(
        apiload,
        [
          "run",
          "-server",
          cp.url,
          "-tokens",
          tokensFile,
          "-role",
          role,
          "-version",
          version,
          "-seconds",
          String(seconds),
          "-metrics",
          `127.0.0.1:${metricsPort}`,
          "-watch-scale",
          String(watchScale),
          "-storm-at",
          String(stormAt ?? -1),
        ],
        // Informers list, then watch (as clusters before client-go 1.35 do, and unbounded-net v0.8.0's did).
        { env: { ...process.env, KUBE_FEATURE_WatchListClient: "false" } },
      ),
  };
}

export { freePort };
