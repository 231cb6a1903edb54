"use client";
/**
 * A timeline's writes as CSV, fetched on click from the object's list of writes (the range's first 5,000: the file's
 * name says when there were more): one row per write, oldest first, with its request, the fields it changed and what
 * consumers routed on after it.
 */
import { CsvLink } from "@/components/panels/csv-link";
import { fetchEnvelope } from "@/lib/api/fetch-envelope";
import type { WriteTraits } from "@/lib/churn/conditions";
import { apiUrl } from "@/lib/query/hooks";
import type { ObjectWritesAnswer } from "@/lib/wire/objects";

const HEADER = [
  "time_utc",
  "timestamp_ms",
  "class",
  "writer",
  "source",
  "verb",
  "subresource",
  "user_agent",
  "code",
  "resource_version",
  "changed_fields",
  "marks",
  "routed_after",
] as const;

/** "echo; clock only; frozen Ready", as the timeline's marks row names them. */
const marksOf = (traits: WriteTraits) =>
  [
    ...(traits.echo ? ["echo"] : []),
    ...(traits.clocks?.clockOnly ? ["clock only"] : []),
    ...(traits.clocks?.findings ?? []).map((f) => `${f.finding} ${f.type}`),
  ].join("; ");

export function WritesCsv({ path, startMs, endMs, snapshot, name }: { path: string; startMs: number; endMs: number; snapshot?: string; name: string }) {
  let truncated = false;
  const rows = async () => {
    const answer = (await fetchEnvelope<ObjectWritesAnswer>(apiUrl(`${path}/writes`, { from: startMs, to: endMs, snapshot }))).data;
    truncated = answer.truncated;
    return answer.writes.map((w) => [
      new Date(w.tsMs).toISOString(),
      w.tsMs,
      w.class,
      w.writer,
      w.source,
      w.request?.verb ?? null,
      w.request?.subresource ?? null,
      w.request?.userAgent ?? null,
      w.request?.code || null,
      w.resourceVersion ?? null,
      w.changes.map((c) => c.path).join(" "),
      w.traits ? marksOf(w.traits) : null,
      Object.entries(w.projection)
        .map(([field, value]) => `${field}=${value}`)
        .join(" "),
    ]);
  };
  return <CsvLink testId="timeline-csv" name={() => `${name}-writes${truncated ? "-first-5000" : ""}`} header={HEADER} rows={rows} />;
}
