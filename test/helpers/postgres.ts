/**
 * A real PostgreSQL server for the store's tests: Debian's server binaries, `initdb` into a temporary directory and
 * `postgres` on a free loopback port with password (SCRAM) authentication, stopped and removed by the test. The stop
 * is an immediate shutdown: the files are removed next, so a shutdown checkpoint would only write what is deleted.
 * As root, the server runs as the `postgres` user Debian's package makes (PostgreSQL refuses root).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort, start, type Running } from "./processes";

export interface TestPostgres {
  /** the superuser's URL of the `churnscope` database */
  url: string;
  port: number;
  user: string;
  password: string;
  /** a URL of another database on the same server (made on the first call) */
  database(name: string): Promise<string>;
  /** SQL as the superuser, on the `churnscope` database */
  sql(text: string, params?: unknown[]): Promise<pg.QueryResult>;
  /** kill -9 (as an OOM kill or a node's loss would), then start again on the same directory */
  crashAndRestart(): Promise<void>;
  stop(): Promise<void>;
}

const INSTALL_HINT = "install Debian's postgresql package (bash .ci/run does)";

/** The server's binaries: Debian keeps them under /usr/lib/postgresql/<major>/bin, the newest first. */
function binDir(): string {
  const debian = "/usr/lib/postgresql";
  const majors = existsSync(debian)
    ? readdirSync(debian)
        .filter((name) => existsSync(join(debian, name, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length > 0) return join(debian, majors[0], "bin");
  const found = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).stdout.trim();
  if (found) return found.replace(/\/initdb$/, "");
  throw new Error(`PostgreSQL's initdb is not installed; ${INSTALL_HINT}`);
}

/** The user the server runs as: this one, or Debian's `postgres` when this is root. */
function serverUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
  const uid = id("-u");
  const gid = id("-g");
  if (uid.status !== 0 || gid.status !== 0) throw new Error(`running as root, PostgreSQL needs the postgres user to run as; ${INSTALL_HINT}`);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** `settings`: server settings beyond the defaults (`-c name=value`), such as a benchmark's buffers. */
export async function startPostgres(options: { settings?: Record<string, string> } = {}): Promise<TestPostgres> {
  const bin = binDir();
  const owner = serverUser();
  const dir = mkdtempSync(join(tmpdir(), "churnscope-pg-"));
  const data = join(dir, "data");
  const user = "churnscope_test";
  const password = `pw-${process.pid}-${Date.now()}`;
  const passwordFile = join(dir, "password");
  writeFileSync(passwordFile, password);
  if (owner.uid !== undefined) for (const path of [dir, passwordFile]) chownSync(path, owner.uid, owner.gid!);
  execFileSync(
    join(bin, "initdb"),
    ["-D", data, "-U", user, `--pwfile=${passwordFile}`, "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync"],
    { ...owner, stdio: "pipe" },
  );
  const port = await freePort();
  let running: Running;
  const launch = async () => {
    running = start(
      join(bin, "postgres"),
      [
        "-D",
        data,
        "-p",
        String(port),
        "-h",
        "127.0.0.1",
        "-k",
        dir,
        "-c",
        "max_connections=60",
        "-c",
        "log_min_messages=warning",
        ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
      ],
      { ...owner, stopSignal: "SIGQUIT" },
    );
    await waitForServer();
  };
  const base = `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  const admin = () => new pg.Client({ connectionString: `${base}/postgres` });
  const waitForServer = async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (running.child.exitCode !== null) throw new Error(`postgres exited (${running.child.exitCode}) before it accepted connections:\n${running.output()}`);
      const client = admin();
      try {
        await client.connect();
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 30 s (${(error as Error).message}):\n${running.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const database = async (name: string) => {
    const client = admin();
    await client.connect();
    try {
      const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } finally {
      await client.end();
    }
    return `${base}/${name}`;
  };
  const stop = async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await launch();
    await database("churnscope");
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `${base}/churnscope`,
    port,
    user,
    password,
    database,
    async sql(text, params) {
      const client = new pg.Client({ connectionString: `${base}/churnscope` });
      await client.connect();
      try {
        return await client.query(text, params);
      } finally {
        await client.end();
      }
    },
    async crashAndRestart() {
      const postmaster = running.child.pid!;
      // The whole server at once, as a machine that fails takes it: each backend runs in a process group of its own, and
      // one left running holds the shared memory the new server then finds in use.
      const processes = [postmaster, ...childrenOf(postmaster)];
      for (const pid of processes) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // it ended meanwhile
        }
      }
      await new Promise<void>((resolve) =>
        running.child.exitCode !== null || running.child.signalCode !== null ? resolve() : running.child.once("exit", () => resolve()),
      );
      const deadline = Date.now() + 10_000;
      while (processes.some(notExited)) {
        if (Date.now() > deadline) throw new Error("the killed PostgreSQL's processes were still running after 10 s");
        await new Promise((r) => setTimeout(r, 20));
      }
      await launch();
    },
    stop,
  };
}

/** A process's state and parent, from Linux's /proc (undefined once it is gone). */
function processStat(pid: number): { state: string; parent: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after its last ")".
  const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, parent: Number(parent) };
}

/** The processes `parent` started. */
function childrenOf(parent: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => processStat(pid)?.parent === parent);
}

/** Whether a process has not yet exited (a zombie has, and holds no shared memory). */
function notExited(pid: number): boolean {
  const stat = processStat(pid);
  return stat !== undefined && stat.state !== "Z";
}
