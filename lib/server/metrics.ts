/** What the dashboard's /metrics serves: how it shares Prometheus queries, and the in-process recorder. */
import type { AuditIntake } from "../audit/intake-thread";
import { Exposition } from "../metrics/exposition";
import { existing } from "../runtime/per-process";
import { recorderMetrics } from "../recorder/recorder";
import type { ServerContext } from "./context";
import { runningRecorder } from "./recording";

export async function serverMetrics(ctx: ServerContext): Promise<string> {
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
  const spool = existing<AuditIntake>("auditIntake");
  if (spool) {
    const queued = await spool.spool.queued();
    out
      .family("churnscope_audit_spool_batches", "gauge", "Audit webhook batches on disk, accepted and not yet taken into the store.", [[{}, queued.batches]])
      .family("churnscope_audit_spool_bytes", "gauge", "Bytes of those batches (audit.maxSpoolMiB bounds them).", [[{}, queued.bytes]])
      .family("churnscope_audit_spool_drained_total", "counter", "Batches taken into the store since start, by outcome.", [
        [{ outcome: "stored" }, spool.drained],
        [{ outcome: "unreadable" }, spool.failed],
      ]);
  }
  if (ctx.config.audit.sources.length > 0 && ctx.stores.live.opened) await bucketMetrics(ctx, out);
  const recorder = runningRecorder(ctx);
  if (recorder) await recorderMetrics(recorder, ctx.stores.liveStore(), Date.now(), out);
  return out.text();
}

/** The audit bucket sources' record, from the store: what any process reading them has done. */
async function bucketMetrics(ctx: ServerContext, out: Exposition): Promise<void> {
  const checkpoints = ctx.stores.liveStore().buckets();
  const sources = [];
  for (const config of ctx.config.audit.sources)
    sources.push({ source: config.name, status: await checkpoints.source(config.name), totals: await checkpoints.totals(config.name) });
  out
    .family(
      "churnscope_audit_source_objects",
      "gauge",
      "Objects of each audit bucket source taken in and kept (retention forgets older ones), by outcome.",
      sources.flatMap(({ source, totals }) =>
        Object.entries(totals.byOutcome).map(([outcome, n]): [Record<string, string>, number] => [{ source, outcome }, n]),
      ),
    )
    .family(
      "churnscope_audit_source_polls_total",
      "counter",
      "Polls of each audit bucket source.",
      sources.map(({ source, status }) => [{ source }, status?.polls ?? 0]),
    )
    .family(
      "churnscope_audit_source_failing",
      "gauge",
      "1 when the source's last poll could not list or read everything (the Clients page says why).",
      sources.map(({ source, status }) => [{ source }, status?.error ? 1 : 0]),
    )
    .family(
      "churnscope_audit_source_last_success_timestamp_seconds",
      "gauge",
      "When the source's last poll that did everything ended.",
      sources.map(({ source, status }) => [{ source }, (status?.lastSuccessMs ?? 0) / 1000]),
    );
}
