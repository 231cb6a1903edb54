/**
 * The Clients view: completed write requests from the audit log by client, of the live store or of a snapshot
 * (lib/store/clients-query.ts asks them), and before/after a chosen time (the worker-gateway watch-scoping change:
 * "−54 % controller API calls").
 */
import { z } from "zod";
import { badRequest } from "../../api/envelope";
import { rangeParams } from "../../panels/params";
import { queryClients } from "../../store/clients-query";
import type { ServerContext } from "../context";
import { queryParams } from "./query-params";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";
import type { ClientsAnswer } from "../../wire/clients";

const schema = z.object({
  from: z.string().max(64).default(DEFAULT_FROM),
  to: z.string().max(64).default(DEFAULT_TO),
  cluster: z.string().max(253).optional(),
  /** resource or resource.group, e.g. httproutes.gateway.networking.k8s.io */
  resource: z.string().max(253).optional(),
  /** the before/after split, epoch ms */
  at: z.coerce.number().int().min(0).max(8_640_000_000_000_000).optional(),
  /** read a snapshot's audit requests (the replay's included) instead of the live store's */
  snapshot: z.string().max(64).optional(),
});

export async function clientsAnswer(ctx: ServerContext, params: Record<string, string>): Promise<{ data: ClientsAnswer; infos: string[] }> {
  const p = queryParams(schema, params);
  const { startMs, endMs } = rangeParams(p.from, p.to, Date.now(), ctx.config.limits.maxRangeMs);
  if (p.at !== undefined && (p.at <= startMs || p.at >= endMs)) throw badRequest("parameter at: the before/after time must lie inside the range");
  const audit = (p.snapshot === undefined ? ctx.stores.liveStore() : await ctx.stores.snapshotStore(p.snapshot, "audit requests")).audit();
  const data = await queryClients(audit, { startMs, endMs, cluster: p.cluster, resource: p.resource, atMs: p.at });
  if (p.snapshot !== undefined) {
    const note = (await ctx.snapshots.open(p.snapshot)).auditNote;
    return { data, infos: note ? [note] : [] };
  }
  const infos = (await audit.hasRequests())
    ? []
    : [
        "No audit log has been ingested: run `npm run ingest -- PATH…`, upload a log here, or point the API server's audit webhook at /api/audit/webhook (docs/audit.md).",
      ];
  return { data, infos };
}
