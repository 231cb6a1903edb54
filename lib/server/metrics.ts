/** What the dashboard's /metrics serves: how it shares Prometheus queries, and the in-process recorder. */
import type { SpoolService } from "../audit/spool-thread";
import { Exposition } from "../metrics/exposition";
import { existing } from "../runtime/per-process";
import { recorderMetrics } from "../recorder/recorder";
import type { ServerContext } from "./context";
import { runningRecorder } from "./recording";

export function serverMetrics(ctx: ServerContext): string {
  const out = new Exposition();
  const shared = ctx.prometheus?.client;
  if (shared) {
    const { upstream, coalesced, cached, busy } = shared.stats;
    out
      .family("churnscope_prometheus_requests_total", "counter", "Prometheus API requests the panels made, by how they were answered.", [
        [{ outcome: "upstream" }, upstream],
        [{ outcome: "coalesced" }, coalesced],
        [{ outcome: "cached" }, cached],
        [{ outcome: "busy" }, busy],
      ])
      .family("churnscope_prometheus_queries_active", "gauge", "Calls to Prometheus running now.", [[{}, shared.active()]])
      .family("churnscope_prometheus_queries_queued", "gauge", "Calls waiting for a free slot (prometheus.maxConcurrentQueries).", [[{}, shared.queued()]]);
  }
  const spool = existing<SpoolService>("auditSpool");
  if (spool) {
    out
      .family("churnscope_audit_spool_batches", "gauge", "Audit webhook batches on disk, accepted and not yet taken into the store.", [
        [{}, spool.spool.queued.batches],
      ])
      .family("churnscope_audit_spool_bytes", "gauge", "Bytes of those batches (audit.maxSpoolMiB bounds them).", [[{}, spool.spool.queued.bytes]])
      .family("churnscope_audit_spool_drained_total", "counter", "Batches taken into the store since start, by outcome.", [
        [{ outcome: "stored" }, spool.drained],
        [{ outcome: "unreadable" }, spool.failed],
      ]);
  }
  const recorder = runningRecorder(ctx);
  if (recorder) recorderMetrics(recorder, ctx.stores.liveStore(), Date.now(), out);
  return out.text();
}
