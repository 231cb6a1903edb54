/** Starting and stopping real servers (tests, the replay build): free loopback ports, readiness, clean shutdown by PID. */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";

/**
 * A loopback port free now, chosen at random below Linux's ephemeral range (32768 and up by default): a port the
 * kernel hands out for port 0 is also what it gives the next outgoing connection, which can take it before the
 * server it was chosen for binds it (seen with tests running side by side).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = FIRST_PORT + Math.floor(Math.random() * (LAST_PORT - FIRST_PORT));
    if (await bindable(port)) return port;
    if (attempt > 200) throw new Error(`no free loopback port between ${FIRST_PORT} and ${LAST_PORT}`);
  }
}

const FIRST_PORT = 20_000;
const LAST_PORT = 32_000;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Fails with an install hint when a binary is missing (CI installs it). */
export function requireBinary(name: string, installHint: string): string {
  const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === "") throw new Error(`${name} is not installed; ${installHint}`);
  return path;
}

export interface Running {
  child: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/** Spawns in its own process group so stop() ends the process and any children it started (SIGTERM, or `stopSignal`). */
export function start(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; uid?: number; gid?: number; stopSignal?: NodeJS.Signals } = {},
): Running {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    uid: options.uid,
    gid: options.gid,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.on("data", (d) => (log = (log + d).slice(-20_000)));
  child.stderr?.on("data", (d) => (log = (log + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    output: () => log,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, options.stopSignal ?? "SIGTERM");
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          /* already gone */
        }
      }, 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls a URL until it answers 2xx, the process exits, or the deadline passes. */
export async function waitForHttp(url: string, running: Running, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (running.child.exitCode !== null) throw new Error(`process exited (${running.child.exitCode}) before ${url} answered:\n${running.output()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${running.output()}`);
}
