/**
 * The object-churn JSON API: validated parameters → one store query → domain rows. Snapshot
 * requests read the snapshot's store; others read the live store.
 */
import { z } from "zod";
import { badRequest } from "../../api/envelope";
import { WRITE_CLASSES } from "../../churn/analyze";
import type { ServerContext } from "../context";
import type { ObjectFilter } from "../../store/store";
import { rangeParams } from "../../panels/params";
import { hasLiveObjects } from "../recording";
import { OBJECT_PATH_HELP, objectKeyFromSegments } from "../../objects/key";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";
import type { FieldRow, ObjectKey, ObjectWritesAnswer, ObjectsAnswer } from "../../wire/objects";

const name = z.string().max(253);
const filterSchema = z.object({
  cluster: name.optional(),
  group: name.optional(),
  kind: name.optional(),
  namespace: name.optional(),
  class: z.enum(WRITE_CLASSES).optional(),
  from: z.string().max(64).default(DEFAULT_FROM),
  to: z.string().max(64).default(DEFAULT_TO),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
  snapshot: z.string().max(64).optional(),
});

function parse(params: Record<string, string>, maxRangeMs: number) {
  const cleaned = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== ""));
  const parsed = filterSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badRequest(`parameter ${issue.path.join(".") || "?"}: ${issue.message}`);
  }
  const p = parsed.data;
  const { startMs: fromMs, endMs: toMs } = rangeParams(p.from, p.to, Date.now(), maxRangeMs);
  const filter: ObjectFilter = { cluster: p.cluster, group: p.group, kind: p.kind, namespace: p.namespace, cls: p.class, fromMs, toMs };
  return { p, filter };
}

async function storeFor(ctx: ServerContext, snapshot: string | undefined) {
  return snapshot !== undefined ? await ctx.stores.snapshotStore(snapshot) : ctx.stores.liveStore();
}

const NO_RECORDER =
  "No cluster is being recorded by this dashboard and no audit log is ingested: list clusters under `clusters:` in the configuration or set KUBECONFIG, run `npm run recorder` with the same data dir, or ingest audit logs (Clients page, `npm run ingest`). Snapshots with object writes (the replay) open without either.";

/** What a live answer should say about its source: no recorder at all, or the periods it could not observe. */
function liveNotes(ctx: ServerContext, filter: ObjectFilter): { warnings: string[]; infos: string[] } {
  const store = ctx.stores.liveStore();
  const gaps = store
    .gaps(filter.fromMs, filter.toMs)
    .map(
      (g) =>
        `Not observed on ${g.cluster} (${g.profile}) from ${new Date(g.fromMs).toISOString()} to ${g.toMs === null ? "now" : new Date(g.toMs).toISOString()}: ${g.reason}.`,
    );
  // A recorder runs here, or ran (perhaps as `npm run recorder`) into this data dir.
  const recording = hasLiveObjects(ctx);
  return { warnings: gaps, infos: recording ? [] : [NO_RECORDER] };
}

export async function listObjects(ctx: ServerContext, params: Record<string, string>): Promise<{ data: ObjectsAnswer; warnings?: string[]; infos?: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const store = await storeFor(ctx, p.snapshot);
  const { total, rows } = store.objects(filter, p.pageSize, (p.page - 1) * p.pageSize);
  return {
    data: { total, page: p.page, pageSize: p.pageSize, startMs: filter.fromMs, endMs: filter.toMs, rows, kinds: store.kinds() },
    ...(p.snapshot === undefined ? liveNotes(ctx, filter) : {}),
  };
}

export async function listFields(
  ctx: ServerContext,
  params: Record<string, string>,
): Promise<{ data: { startMs: number; endMs: number; rows: FieldRow[] }; warnings?: string[]; infos?: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  return {
    data: { startMs: filter.fromMs, endMs: filter.toMs, rows: (await storeFor(ctx, p.snapshot)).fields(filter, 200) },
    ...(p.snapshot === undefined ? liveNotes(ctx, filter) : {}),
  };
}

/** /api/objects/{object path}/writes */
export function keyFromSegments(segments: string[]): ObjectKey {
  if (segments.at(-1) !== "writes") throw badRequest(`expected /api/objects/${OBJECT_PATH_HELP}/writes`);
  return objectKeyFromSegments(segments.slice(0, -1));
}

export async function objectWrites(
  ctx: ServerContext,
  key: ObjectKey,
  params: Record<string, string>,
): Promise<{ data: ObjectWritesAnswer; warnings: string[]; infos: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const store = await storeFor(ctx, p.snapshot);
  const limit = 5_000;
  const writes = store.writesOf(key, filter.fromMs, filter.toMs, limit + 1);
  const initialProjection = store.projectionBefore(key, filter.fromMs);
  return {
    data: {
      key,
      startMs: filter.fromMs,
      endMs: filter.toMs,
      ...(initialProjection ? { initialProjection } : {}),
      writes: writes.slice(0, limit).map(({ cls, ...rest }) => ({ ...rest, class: cls })),
      truncated: writes.length > limit,
    },
    warnings: p.snapshot === undefined ? liveNotes(ctx, filter).warnings.filter((g) => g.includes(`on ${key.cluster} `)) : [],
    infos: writes.length > limit ? [`Showing the first ${limit} writes in this range; narrow the range to see the rest.`] : [],
  };
}
