/**
 * What /readyz checks: the configuration loads, the data directory takes writes, the stores are open (on PostgreSQL:
 * and the database answers, within two seconds), and with no
 * Prometheus configured the embedded replay is there to show. Prometheus itself is not checked:
 * a pod taken out of service while Prometheus is down could not tell anyone that it is. Anyone may
 * ask, so the answer says ok or failed and nothing else (no paths); why is in the server log.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPLAY_BUNDLE_PATH } from "../snapshot/store";
import { getServerContext } from "./context";

/** How long the database may take to answer the readiness check's statement. */
const DATABASE_CHECK_MS = 2_000;

export async function readiness(): Promise<{ ready: boolean; checks: Record<string, string> }> {
  const checks: Record<string, string> = {};
  let ready = true;
  const check = async (name: string, run: () => string | Promise<string>) => {
    try {
      checks[name] = await run();
    } catch (error) {
      ready = false;
      checks[name] = "failed";
      console.error(`churnscope: readiness check ${name} failed: ${(error as Error).message}`);
    }
  };
  await check("config", () => (getServerContext(), "ok"));
  if (!ready) return { ready, checks };
  const ctx = getServerContext();
  await check("dataDir", () => {
    mkdirSync(ctx.config.dataDir, { recursive: true });
    const probe = join(ctx.config.dataDir, `.readyz-${process.pid}`);
    writeFileSync(probe, "");
    rmSync(probe);
    return "writable";
  });
  // A store that would not open (a schema from a newer Churnscope, a file it cannot write) says why in the log at start.
  await check("store", async () => {
    const store = ctx.stores.liveStore();
    ctx.notesStore.get();
    // A replica whose database is unreachable takes no traffic until it answers again (a file answers at once).
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`the database did not answer within ${DATABASE_CHECK_MS} ms`)), DATABASE_CHECK_MS)),
    );
    try {
      return await Promise.race([store.database.engine.ping(), late]);
    } finally {
      clearTimeout(timer);
    }
  });
  await check("source", () => {
    if (ctx.prometheus) return `prometheus configured: ${ctx.prometheus.flavorShown()}`;
    if (!existsSync(REPLAY_BUNDLE_PATH)) throw new Error(`no Prometheus is configured and the embedded replay (${REPLAY_BUNDLE_PATH}) is missing`);
    return "embedded replay";
  });
  return { ready, checks };
}
