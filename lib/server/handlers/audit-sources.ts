/** The audit bucket sources (audit.sources) as the Clients view shows them: each one's polls and objects, from the store. */
import type { BucketObjectRecord } from "../../store/bucket-checkpoints";
import type { AuditSourcesAnswer, BucketObjectStatus } from "../../wire/audit";
import type { ServerContext } from "../context";

const LISTED_OBJECTS = 10;

const objectStatus = (o: BucketObjectRecord): BucketObjectStatus => ({
  key: o.key,
  bytes: o.size,
  modifiedMs: o.modifiedMs,
  readMs: o.readMs,
  outcome: o.outcome,
  detail: o.detail,
  requests: o.requests,
});

export async function auditSourcesAnswer(ctx: ServerContext): Promise<{ data: AuditSourcesAnswer }> {
  const configured = ctx.config.audit.sources;
  if (configured.length === 0) return { data: { sources: [] } };
  const checkpoints = ctx.stores.liveStore().buckets();
  const sources = [];
  for (const config of configured) {
    const status = await checkpoints.source(config.name);
    const totals = await checkpoints.totals(config.name);
    sources.push({
      name: config.name,
      cluster: config.cluster,
      location: `s3://${config.bucket}/${config.prefix}`,
      pollSeconds: config.pollMs / 1000,
      polls: status?.polls ?? 0,
      lastPollMs: status?.lastPollMs ?? null,
      lastSuccessMs: status?.lastSuccessMs ?? null,
      listed: status?.listed ?? 0,
      error: status?.error ?? null,
      errorMs: status?.errorMs ?? null,
      objects: totals.byOutcome,
      bytes: totals.bytes,
      requests: totals.requests,
      recent: (await checkpoints.recent(config.name, LISTED_OBJECTS)).map(objectStatus),
      troubled: (await checkpoints.recent(config.name, LISTED_OBJECTS, true)).map(objectStatus),
    });
  }
  return { data: { sources } };
}
