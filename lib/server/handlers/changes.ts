/**
 * /api/changes: the recorded changes of a range, each tested against the rates of the writers it concerns at the
 * onset (analysis/why.ts). `onset` is the chart's onset when the page has one; without it the onset is detected
 * from the recorded writes. Snapshot requests read the snapshot's store; others the live one.
 */
import { z } from "zod";
import { badRequest } from "../../api/envelope";
import { explainOnset, onsetOfWriters, type WriterRate } from "../../analysis/why";
import { rangeParams } from "../../panels/params";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";
import type { ChangesAnswer } from "../../wire/changes";
import type { ServerContext } from "../context";
import { queryParams } from "./query-params";

/**
 * Bounds of one answer: the changes read and tested (the ones nearest the onset), the ones listed (those the rate
 * stepped at first, then the nearest), the writers asked, each writer's points, the workloads read at the onset.
 */
const MAX_TESTED_CHANGES = 10_000;
export const MAX_LISTED_CHANGES = 500;
const MAX_WRITERS = 20;
const MAX_POINTS = 480;
const MAX_WORKLOADS = 10_000;

const schema = z
  .object({
    from: z.string().max(64).default(DEFAULT_FROM),
    to: z.string().max(64).default(DEFAULT_TO),
    onset: z.coerce.number().int().min(0).max(7_258_118_400_000).optional(),
    snapshot: z.string().max(64).optional(),
  })
  .strict();

export async function answerChanges(ctx: ServerContext, params: Record<string, string>): Promise<{ data: ChangesAnswer; warnings?: string[] }> {
  const p = queryParams(schema, params);
  const { startMs, endMs } = rangeParams(p.from, p.to, Date.now(), ctx.config.limits.maxRangeMs);
  if (p.onset !== undefined && (p.onset < startMs || p.onset > endMs)) throw badRequest("parameter onset: a time inside the range (epoch milliseconds)");
  // Whole multiples of 5 s, at most MAX_POINTS of them across the range.
  const stepMs = Math.max(5_000, Math.ceil((endMs - startMs) / MAX_POINTS / 5_000) * 5_000);
  const store = p.snapshot !== undefined ? await ctx.stores.snapshotStore(p.snapshot) : ctx.stores.liveStore();
  const steps = Math.ceil((endMs - startMs) / stepMs);
  const writers: WriterRate[] = (await store.writerRates(startMs, endMs, stepMs, MAX_WRITERS)).map((w) => ({
    writer: w.writer,
    userAgent: w.userAgent,
    // Writes per second of each step; the last one's by its own length, when the range ends inside it.
    points: Array.from({ length: steps }, (_, k) => {
      const stepEndMs = Math.min(endMs, startMs + (k + 1) * stepMs);
      return [stepEndMs, (w.counts.get(k) ?? 0) / ((stepEndMs - startMs - k * stepMs) / 1000)];
    }),
  }));
  const onsetMs = p.onset ?? onsetOfWriters(writers);
  const { changes, total } = await store.changesBetween(startMs, endMs, MAX_TESTED_CHANGES, onsetMs);
  const latest = onsetMs === undefined ? [] : await store.changesLatestAt(onsetMs, MAX_WORKLOADS);
  const why = explainOnset(changes, writers, latest, { stepMs, onsetMs, detected: p.onset === undefined });
  const near = (t: number) => Math.abs(t - (onsetMs ?? endMs));
  const listed = [...why.changes]
    .sort((a, b) => Number(a.verdict === "did not move") - Number(b.verdict === "did not move") || near(a.change.tsMs) - near(b.change.tsMs))
    .slice(0, MAX_LISTED_CHANGES)
    .sort((a, b) => a.change.tsMs - b.change.tsMs);
  const warnings = [
    ...(total > changes.length
      ? [`${total} changes in this range; the ${changes.length} nearest the onset are tested: narrow the range to test the rest.`]
      : []),
    ...(changes.length > listed.length ? [`${changes.length} changes tested; the ${listed.length} the rate stepped at or nearest the onset are listed.`] : []),
  ];
  return { data: { ...why, changes: listed, startMs, endMs, stepMs, total, tested: changes.length }, ...(warnings.length ? { warnings } : {}) };
}
