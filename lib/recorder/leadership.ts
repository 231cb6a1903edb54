/**
 * Exactly one process records a cluster: each one that could claims the cluster's lease in the store (leases.ts)
 * every few seconds, records while it holds it, and stops as soon as it does not. A holder that dies stops renewing;
 * its lease runs out and another process takes the cluster over within `ttlMs + renewMs`, relisting it and showing
 * the time between as a gap (the watcher's takeover).
 */
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import type { RecorderLeases } from "../store/leases";

export interface LeaseTiming {
  /** how long a lease lasts past its last renewal */
  ttlMs: number;
  /** how often it is claimed or renewed */
  renewMs: number;
}

/** A dead recorder's cluster is taken over within 25 s. */
export const LEASE_TIMING: LeaseTiming = { ttlMs: 20_000, renewMs: 5_000 };

/** This process's name in the leases: host, pid and a random part, so a restarted process is a new holder. */
export const LEASE_HOLDER = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;

export interface Leadership {
  /** whether this process records the cluster now */
  leads(): boolean;
  /** stops recording and gives the lease up, so another process takes over at once */
  stop(): Promise<void>;
}

/**
 * Holds `cluster` for `record` while the lease is this process's: `record` starts recording (`takeover`: the cluster
 * was not this process's a moment ago) and answers how to stop it. A database that cannot be reached is not a lost
 * lease until the lease would have run out.
 */
export function leadCluster(
  leases: RecorderLeases,
  cluster: string,
  record: (guard: () => Promise<void>, takeover: boolean) => () => Promise<void>,
  log: (line: string) => void,
  timing: LeaseTiming = LEASE_TIMING,
  holder = LEASE_HOLDER,
): Leadership {
  let stopRecording: (() => Promise<void>) | undefined;
  /** stopped once already: taking the cluster again is a takeover, even under this process's own lease */
  let stoppedOnce = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** when the lease held runs out unrenewed: recording stops then, not at the next turn, as another process may take over from then on */
  let expiry: NodeJS.Timeout | undefined;
  /** why the last claim failed, said when the lease then runs out */
  let claimError: string | undefined;
  const guard = () => leases.check(cluster, holder, Date.now());
  const lose = async (why: string) => {
    const stopping = stopRecording;
    stopRecording = undefined;
    if (!stopping) return;
    stoppedOnce = true;
    log(`${cluster}: stopped: ${why}`);
    await stopping();
  };
  const turn = async () => {
    const nowMs = Date.now();
    try {
      const { held, taken } = await leases.claim(cluster, holder, nowMs, timing.ttlMs);
      if (stopped) return;
      if (held) {
        claimError = undefined;
        clearTimeout(expiry);
        expiry = setTimeout(() => void lose(`the lease could not be renewed: ${claimError ?? "no answer"}`), nowMs + timing.ttlMs - Date.now());
      }
      if (held && !stopRecording) {
        log(`${cluster}: started (${taken ? "took the lease" : "holds the lease"} as ${holder})`);
        stopRecording = record(guard, taken || stoppedOnce);
      } else if (!held) await lose("another process holds its lease");
    } catch (error) {
      // Not a lost lease yet: the timer set at its last renewal stops recording when it runs out.
      claimError = (error as Error).message;
    }
  };
  const loop = async () => {
    await turn();
    if (!stopped) timer = setTimeout(() => void loop(), timing.renewMs);
  };
  void loop();
  return {
    leads: () => stopRecording !== undefined,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(expiry);
      await lose("the process stops");
      await leases.release(cluster, holder).catch(() => undefined);
    },
  };
}
