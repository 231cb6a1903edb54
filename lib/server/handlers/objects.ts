/**
 * The object-churn JSON API: validated parameters → one store query → domain rows. Snapshot
 * requests read the snapshot's store; others read the live store.
 */
import { z } from "zod";
import { badRequest, notFound } from "../../api/envelope";
import { MAX_TIMELINE_COLUMNS } from "../../objects/timeline";
import { WRITE_CLASSES } from "../../churn/write-class";
import type { ServerContext } from "../context";
import { queryParams } from "./query-params";
import type { ObjectFilter } from "../../store/store";
import type { WritePick } from "../../store/timelines";
import { rangeParams } from "../../panels/params";
import { hasLiveObjects } from "../recording";
import { OBJECT_PATH_HELP, objectKeyFromSegments } from "../../objects/key";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";
import {
  OBJECT_SORTS,
  type FieldsAnswer,
  type ObjectKey,
  type ObjectLanesAnswer,
  type ObjectSort,
  type ObjectTimelineAnswer,
  type ObjectWritesAnswer,
  type ObjectsAnswer,
  type PickedWriteAnswer,
} from "../../wire/objects";

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
  sort: z.enum(OBJECT_SORTS).default("writes"),
  heartbeats: z.enum(["show", "hide"]).default("show"),
  snapshot: z.string().max(64).optional(),
});

/** An Objects request's parameters and the store filter they make (the condition and flap answers read the same scope). */
export function parse(params: Record<string, string>, maxRangeMs: number) {
  const p = queryParams(filterSchema, params);
  const { startMs: fromMs, endMs: toMs } = rangeParams(p.from, p.to, Date.now(), maxRangeMs);
  const filter: ObjectFilter = { cluster: p.cluster, group: p.group, kind: p.kind, namespace: p.namespace, cls: p.class, fromMs, toMs };
  return { p, filter };
}

/** How the Objects ranking and the lanes order objects: the sort, and whether heartbeats are hidden. */
const rankOptions = (p: { sort: ObjectSort; heartbeats: "show" | "hide" }) => ({ sort: p.sort, hideHeartbeats: p.heartbeats === "hide" });

export async function storeFor(ctx: ServerContext, snapshot: string | undefined) {
  return snapshot !== undefined ? await ctx.stores.snapshotStore(snapshot) : ctx.stores.liveStore();
}

const NO_RECORDER =
  "No cluster is being recorded by this dashboard and no audit log is ingested: list clusters under `clusters:` in the configuration or set KUBECONFIG, run `npm run recorder` with the same data dir, or ingest audit logs (Clients page, `npm run ingest`). Snapshots with object writes (the replay) open without either.";

/**
 * What a live answer should say about its source: no recorder at all, or the periods it could not observe. `kinds`: the
 * live store's kinds, which the caller has read for its answer.
 */
export async function liveNotes(ctx: ServerContext, filter: ObjectFilter, kinds?: readonly unknown[]): Promise<{ warnings: string[]; infos: string[] }> {
  const store = ctx.stores.liveStore();
  const gaps = (await store.gaps(filter.fromMs, filter.toMs)).map(
    (g) =>
      `Not observed on ${g.cluster} (${g.profile}) from ${new Date(g.fromMs).toISOString()} to ${g.toMs === null ? "now" : new Date(g.toMs).toISOString()}: ${g.reason}.`,
  );
  // A recorder runs here, or ran (perhaps as `npm run recorder`) into this data dir.
  const recording = await hasLiveObjects(ctx, kinds);
  return { warnings: gaps, infos: recording ? [] : [NO_RECORDER] };
}

export async function listObjects(ctx: ServerContext, params: Record<string, string>): Promise<{ data: ObjectsAnswer; warnings?: string[]; infos?: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const store = await storeFor(ctx, p.snapshot);
  const { total, rows, heartbeatOnly } = await store.objects(filter, p.pageSize, (p.page - 1) * p.pageSize, rankOptions(p));
  const kinds = await store.kinds();
  return {
    data: {
      total,
      heartbeatOnly,
      sort: p.sort,
      page: p.page,
      pageSize: p.pageSize,
      startMs: filter.fromMs,
      endMs: filter.toMs,
      rows,
      kinds,
    },
    ...(p.snapshot === undefined ? await liveNotes(ctx, filter, kinds) : {}),
  };
}

const columnsSchema = z.coerce.number().int().min(1).max(MAX_TIMELINE_COLUMNS).default(1_000);

/** A timeline's or the lanes' `width`: how many pixel columns it is drawn in. */
function columnsOf(params: Record<string, string>): number {
  const columns = columnsSchema.safeParse(params.width || undefined);
  if (!columns.success) throw badRequest(`parameter width: a whole number of pixel columns from 1 to ${MAX_TIMELINE_COLUMNS}`);
  return columns.data;
}

/**
 * /api/objects/lanes: a page of the scope's objects, each its routed projection and transitions, `width` columns wide: the
 * written ones in the ranking's order, then the quiet ones (there when the range began, not written in it).
 */
export async function listLanes(
  ctx: ServerContext,
  params: Record<string, string>,
): Promise<{ data: ObjectLanesAnswer; warnings?: string[]; infos?: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const columns = columnsOf(params);
  const store = await storeFor(ctx, p.snapshot);
  const offset = (p.page - 1) * p.pageSize;
  const ranked = await store.objects(filter, p.pageSize, offset, rankOptions(p));
  // After the written objects, the quiet ones: known by the range's start, not written in it.
  const quiet = filter.cls ? { total: 0, keys: [] } : await store.quietObjects(filter, p.pageSize - ranked.rows.length, Math.max(0, offset - ranked.total));
  const total = ranked.total + quiet.total;
  const heartbeatOnly = ranked.heartbeatOnly;
  const shown = [
    ...ranked.rows.map(({ cluster, group, kind, namespace, name, writes, routed, wastedRatio }) => ({
      cluster,
      group,
      kind,
      namespace,
      name,
      writes,
      routed,
      wastedRatio,
    })),
    ...quiet.keys.map((key) => ({ ...key, writes: 0, routed: 0, wastedRatio: 0 })),
  ];
  const drawn = await store.lanes(shown, filter.fromMs, filter.toMs, columns);
  const lanes = shown.map((lane, i) => ({ ...lane, ...drawn[i] }));
  const kinds = await store.kinds();
  return {
    data: {
      total,
      written: ranked.total,
      heartbeatOnly,
      sort: p.sort,
      page: p.page,
      pageSize: p.pageSize,
      startMs: filter.fromMs,
      endMs: filter.toMs,
      columns,
      lanes,
      kinds,
    },
    ...(p.snapshot === undefined ? await liveNotes(ctx, filter, kinds) : {}),
  };
}

export async function listFields(ctx: ServerContext, params: Record<string, string>): Promise<{ data: FieldsAnswer; warnings?: string[]; infos?: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const store = await storeFor(ctx, p.snapshot);
  const kinds = await store.kinds();
  return {
    data: { startMs: filter.fromMs, endMs: filter.toMs, rows: await store.fields(filter, 200), kinds },
    ...(p.snapshot === undefined ? await liveNotes(ctx, filter, kinds) : {}),
  };
}

const OBJECT_ANSWERS = ["writes", "timeline", "write"] as const;
type ObjectAnswer = (typeof OBJECT_ANSWERS)[number];

/** /api/objects/{object path}/writes, …/timeline or …/write */
export function objectRoute(segments: string[]): { key: ObjectKey; answer: ObjectAnswer } {
  const answer = OBJECT_ANSWERS.find((a) => a === segments.at(-1));
  if (!answer) throw badRequest(`expected /api/objects/${OBJECT_PATH_HELP}/ followed by writes, timeline or write`);
  return { key: objectKeyFromSegments(segments.slice(0, -1)), answer };
}

/** One object's answer of the kind its path ends with. */
export function objectAnswer(ctx: ServerContext, segments: string[], params: Record<string, string>) {
  const { key, answer } = objectRoute(segments);
  return answer === "timeline" ? objectTimeline(ctx, key, params) : answer === "write" ? pickedWrite(ctx, key, params) : objectWrites(ctx, key, params);
}

/** The warnings a live object answer carries: the periods its cluster was not observed. */
async function objectWarnings(ctx: ServerContext, snapshot: string | undefined, key: ObjectKey, filter: ObjectFilter): Promise<string[]> {
  return snapshot === undefined ? (await liveNotes(ctx, filter)).warnings.filter((g) => g.includes(`on ${key.cluster} `)) : [];
}

/** /api/objects/{object path}/timeline?width=N: every write in the range counted into N pixel columns. */
export async function objectTimeline(
  ctx: ServerContext,
  key: ObjectKey,
  params: Record<string, string>,
): Promise<{ data: ObjectTimelineAnswer; warnings: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const store = await storeFor(ctx, p.snapshot);
  return {
    data: { key, ...(await store.timeline(key, filter.fromMs, filter.toMs, columnsOf(params))) },
    warnings: await objectWarnings(ctx, p.snapshot, key, filter),
  };
}

const pickSchema = z.union([
  z.object({
    seq: z.coerce.number().int().min(0),
    /** the write this many places later (earlier when negative) in the range, or the last (first) there is */
    step: z.coerce.number().int().min(-100_000).max(100_000).optional(),
    /** counting only routed writes, or only writes marked with traits (echoes, clock faults) */
    only: z.enum(["routed", "marked"]).optional(),
  }),
  z.object({ near: z.coerce.number().int().min(0).max(8_640_000_000_000_000), only: z.enum(["routed", "marked"]).optional() }),
]);

/**
 * /api/objects/{object path}/write?seq=N[&step=K][&only=routed|marked] or ?near=epoch-ms: one write in full, with its
 * neighbours in the range.
 */
export async function pickedWrite(
  ctx: ServerContext,
  key: ObjectKey,
  params: Record<string, string>,
): Promise<{ data: PickedWriteAnswer; warnings: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const given = Object.fromEntries(["seq", "near", "step", "only"].flatMap((k) => (params[k] ? [[k, params[k]]] : [])));
  const picked = pickSchema.safeParse(given);
  if (!picked.success || (given.seq && given.near))
    throw badRequest("give seq (a write's number, with step and only to move from it) or near (epoch milliseconds)");
  const pick: WritePick = "seq" in picked.data ? picked.data : { nearMs: picked.data.near, ...(picked.data.only && { only: picked.data.only }) };
  const found = await (await storeFor(ctx, p.snapshot)).pickWrite(key, filter.fromMs, filter.toMs, pick);
  if (!found)
    throw notFound(
      "seq" in pick && !pick.step
        ? `this object has no write ${pick.seq} in this range`
        : `this object has no ${pick.only ? `${pick.only} ` : ""}writes there in this range`,
    );
  return { data: found, warnings: await objectWarnings(ctx, p.snapshot, key, filter) };
}

export async function objectWrites(
  ctx: ServerContext,
  key: ObjectKey,
  params: Record<string, string>,
): Promise<{ data: ObjectWritesAnswer; warnings: string[]; infos: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const store = await storeFor(ctx, p.snapshot);
  const limit = 5_000;
  const writes = await store.writesOf(key, filter.fromMs, filter.toMs, limit + 1);
  const initialProjection = await store.projectionBefore(key, filter.fromMs);
  return {
    data: {
      key,
      startMs: filter.fromMs,
      endMs: filter.toMs,
      ...(initialProjection ? { initialProjection } : {}),
      writes: writes.slice(0, limit).map(({ cls, ...rest }) => ({ ...rest, class: cls })),
      truncated: writes.length > limit,
    },
    warnings: await objectWarnings(ctx, p.snapshot, key, filter),
    infos: writes.length > limit ? [`Showing the first ${limit} writes in this range; narrow the range to see the rest.`] : [],
  };
}
