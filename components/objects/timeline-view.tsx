"use client";
/**
 * One object's timeline: a band for the routed projection (what the consumer acts on), a lane
 * per most-changed field, every write as a tick coloured by class, and the chosen write's diff.
 */
import Link from "next/link";
import { parseAsInteger, parseAsString, useQueryStates } from "nuqs";
import { useElementWidth } from "@/components/panels/use-element-width";
import { ApiNotices, StoreLoading } from "./api-notices";
import { RangeStatus } from "@/components/time-range/range-status";
import { useViewRange } from "@/components/time-range/use-view-range";
import { ViewControls } from "@/components/time-range/view-controls";
import { formatUtc } from "@/lib/format/time";
import { apiUrl, useApi } from "@/lib/query/hooks";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import type { ApiWrite, ObjectKey, ObjectWritesAnswer } from "@/lib/wire/objects";
import { objectPath } from "@/lib/objects/key";
import { CLASS_COLORS } from "./object-link";
import { DEFAULT_FROM, DEFAULT_TO } from "@/lib/time/range";

type Write = ApiWrite;
type Answer = ObjectWritesAnswer;

const urlState = { from: parseAsString.withDefault(DEFAULT_FROM), to: parseAsString.withDefault(DEFAULT_TO), write: parseAsInteger };
const LANES = 6;
const LABEL_WIDTH = 260;

/** The write closest in time to `t` (writes are in time order). */
function nearestWrite(writes: Write[], t: number): Write | undefined {
  let low = 0;
  let high = writes.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (writes[mid].tsMs < t) low = mid + 1;
    else high = mid;
  }
  const after = writes[low];
  const before = writes[low - 1];
  return before && after && t - before.tsMs < after.tsMs - t ? before : after;
}

const projectionText = (p: Record<string, string> | undefined) =>
  p
    ? Object.entries(p)
        .map(([k, v]) => `${k}=${v === "" ? "—" : v.length > 14 ? `${v.slice(0, 12)}…` : v}`)
        .join(" ")
    : "unknown";
const valueText = (v: unknown) => (v === undefined ? "(absent)" : typeof v === "string" ? v : JSON.stringify(v));

export function TimelineView({ initialNowMs, snapshot, objectKey }: { initialNowMs: number; snapshot?: SnapshotInfo; objectKey: ObjectKey }) {
  const [url, setUrl] = useQueryStates(urlState, { history: "push" });
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const { startMs, endMs, errors, controls } = useViewRange(initialNowMs, snapshot, url.from, url.to, (from, to) => void setUrl({ from, to }));
  const answer = useApi<Answer>(apiUrl(`/api/objects/${objectPath(objectKey)}/writes`, { from: startMs, to: endMs, snapshot: snapshot?.id }));
  const data = answer.data?.data;
  const writes = data?.writes ?? [];
  const plot = Math.max(100, width - LABEL_WIDTH);
  const x = (t: number) => LABEL_WIDTH + ((t - startMs) / (endMs - startMs)) * plot;

  // The state band: one segment per distinct projection, starting from the value before the range.
  const segments: { from: number; to: number; projection?: Record<string, string> }[] = [];
  let current = data?.initialProjection;
  let since = startMs;
  for (const w of writes) {
    if (JSON.stringify(w.projection) !== JSON.stringify(current)) {
      segments.push({ from: since, to: w.tsMs, projection: current });
      current = w.projection;
      since = w.tsMs;
    }
  }
  segments.push({ from: since, to: endMs, projection: current });
  const bandColor = (p?: Record<string, string>) => (!p ? "var(--grid)" : p.online === "true" ? "#86efac" : p.online === "false" ? "#d1d5db" : "#bfdbfe");

  const counts = new Map<string, number>();
  for (const w of writes) for (const c of w.changes) counts.set(c.path, (counts.get(c.path) ?? 0) + 1);
  const lanes = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, LANES);
  const selected = writes.find((w) => w.seq === url.write) ?? null;
  const byClass = new Map<string, number>();
  for (const w of writes) byClass.set(w.class, (byClass.get(w.class) ?? 0) + 1);
  const rowHeight = 18;
  const height = 26 + (lanes.length + 1) * rowHeight + 8;
  const selectedIndex = selected ? writes.indexOf(selected) : -1;

  return (
    <main className="mx-auto max-w-[1600px] space-y-3 p-3">
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <h1 className="text-lg font-semibold" data-testid="object-title">
          {objectKey.kind} {objectKey.namespace ? `${objectKey.namespace}/` : ""}
          {objectKey.name}
        </h1>
        <span className="text-[var(--muted)]">
          {objectKey.cluster} · {objectKey.group || "core"}
        </span>
        <Link
          prefetch={false}
          className="text-[var(--accent)] hover:underline"
          href={apiUrl("/objects", { kind: objectKey.kind, group: objectKey.group, from: startMs, to: endMs, snapshot: snapshot?.id })}
        >
          ← Objects
        </Link>
        <ViewControls snapshot={snapshot} {...controls} download={{ view: "objects" }} />
      </div>
      <RangeStatus snapshot={snapshot} startMs={startMs} endMs={endMs} errors={errors} fallback="the last 6 hours" />
      <ApiNotices error={answer.error} answer={answer.data} />
      <section
        data-testid="timeline"
        data-state={answer.isLoading ? "loading" : data ? "ready" : "idle"}
        className="rounded-md border border-[var(--border)] bg-[var(--panel)] p-3"
      >
        {answer.isLoading ? (
          <StoreLoading snapshot={snapshot !== undefined} />
        ) : (
          data && (
            <p className="mb-2 text-xs" data-testid="write-counts">
              {writes.length} writes:{" "}
              {[...byClass.entries()].map(([cls, n]) => (
                <span key={cls} className="mr-2" style={{ color: CLASS_COLORS[cls] }}>
                  {n} {cls}
                </span>
              ))}
              <span className="text-[var(--muted)]">
                · band: what the consumer routes on (green = online); ticks: writes by class; click the lanes for the nearest write's diff.
              </span>
            </p>
          )
        )}
        <div ref={ref} className="w-full">
          {width > 0 && data && (
            <svg width={width} height={height} className="text-xs" role="img" aria-label="object timeline">
              <text x={0} y={16} fill="var(--fg)" fontSize={11}>
                routed projection
              </text>
              {segments.map((s, i) => (
                <g key={i} data-band={projectionText(s.projection)}>
                  <title>{`${formatUtc(s.from)} → ${formatUtc(s.to)}\n${projectionText(s.projection)}`}</title>
                  <rect x={x(s.from)} y={4} width={Math.max(1, x(s.to) - x(s.from))} height={16} fill={bandColor(s.projection)} />
                  {x(s.to) - x(s.from) > 120 && (
                    <text x={x(s.from) + 4} y={16} fontSize={10} fill="#111827">
                      {projectionText(s.projection)}
                    </text>
                  )}
                </g>
              ))}
              {lanes.map(([path, n], lane) => {
                const y = 26 + lane * rowHeight;
                return (
                  <g key={path} data-lane={path}>
                    <text x={0} y={y + 12} fontSize={10} fill="var(--muted)">
                      <title>{path}</title>
                      {path.length > 40 ? `…${path.slice(-39)}` : path} ×{n}
                    </text>
                    <line x1={LABEL_WIDTH} x2={width} y1={y + 8} y2={y + 8} stroke="var(--grid)" />
                    {writes
                      .filter((w) => w.changes.some((c) => c.path === path))
                      .map((w) => (
                        <rect key={w.seq} x={x(w.tsMs)} y={y + 2} width={1.5} height={12} fill={CLASS_COLORS[w.class]} />
                      ))}
                  </g>
                );
              })}
              <text x={0} y={26 + lanes.length * rowHeight + 12} fontSize={11} fill="var(--fg)">
                writes
              </text>
              {writes.map((w) => (
                <rect
                  key={w.seq}
                  data-write={w.seq}
                  data-class={w.class}
                  x={x(w.tsMs) - 1}
                  y={26 + lanes.length * rowHeight}
                  width={3}
                  height={16}
                  fill={CLASS_COLORS[w.class]}
                  stroke={w.seq === url.write ? "var(--fg)" : "none"}
                  pointerEvents="none"
                />
              ))}
              {/* Ticks a pixel apart cannot each be hit: a click anywhere on the lanes picks the nearest write. */}
              <rect
                data-testid="write-picker"
                x={LABEL_WIDTH}
                y={26}
                width={plot}
                height={(lanes.length + 1) * rowHeight}
                fill="transparent"
                className="cursor-crosshair"
                onClick={(e) => {
                  const box = e.currentTarget.getBoundingClientRect();
                  const t = startMs + ((e.clientX - box.left) / box.width) * (endMs - startMs);
                  const nearest = nearestWrite(writes, t);
                  if (nearest) void setUrl({ write: nearest.seq });
                }}
              >
                <title>Click to see the nearest write&apos;s diff</title>
              </rect>
            </svg>
          )}
        </div>
        {data && writes.length === 0 && <p className="py-6 text-center text-sm text-[var(--muted)]">No writes to this object in this range.</p>}
      </section>
      <section data-testid="diff" className="rounded-md border border-[var(--border)] bg-[var(--panel)] p-3 text-sm">
        {selected ? (
          <>
            <div className="mb-2 flex flex-wrap items-center gap-3">
              <span className="font-semibold tabular">{formatUtc(selected.tsMs)}</span>
              <span style={{ color: CLASS_COLORS[selected.class] }} data-testid="diff-class">
                {selected.class}
                {selected.heartbeat ? " (heartbeat)" : ""}
              </span>
              <span>
                by{" "}
                <span className="font-mono" data-testid="diff-writer">
                  {selected.writer}
                </span>
              </span>
              <span className="text-[var(--muted)]" data-testid="diff-source">
                source: {selected.source}
                {selected.request
                  ? ` · ${selected.request.verb}${selected.request.subresource ? ` /${selected.request.subresource}` : ""} · ${selected.request.userAgent || "no user agent"} · HTTP ${selected.request.code || "?"}${selected.request.latencyMs === null ? "" : ` in ${selected.request.latencyMs.toFixed(0)} ms`}`
                  : ""}
              </span>
              <span className="ml-auto flex gap-1">
                <button
                  type="button"
                  className="rounded border border-[var(--border)] px-2 disabled:opacity-40"
                  disabled={selectedIndex <= 0}
                  onClick={() => void setUrl({ write: writes[selectedIndex - 1].seq })}
                >
                  ← earlier
                </button>
                <button
                  type="button"
                  className="rounded border border-[var(--border)] px-2 disabled:opacity-40"
                  disabled={selectedIndex >= writes.length - 1}
                  onClick={() => void setUrl({ write: writes[selectedIndex + 1].seq })}
                >
                  later →
                </button>
              </span>
            </div>
            <p className="mb-2 text-xs text-[var(--muted)]">Routed projection after this write: {projectionText(selected.projection)}</p>
            {selected.changes.length > 0 && (
              <table className="w-full table-fixed font-mono text-xs">
                <thead className="text-[var(--muted)]">
                  <tr>
                    <th className="w-1/4 px-2 py-1 text-left font-medium">field</th>
                    <th className="px-2 py-1 text-left font-medium">before</th>
                    <th className="px-2 py-1 text-left font-medium">after</th>
                  </tr>
                </thead>
                <tbody>
                  {selected.changes.map((c) => (
                    <tr key={c.path} data-change={c.path} className="border-t border-[var(--border)] align-top">
                      <td className="break-all px-2 py-1">{c.path || "(whole object)"}</td>
                      <td className="break-all px-2 py-1 text-[var(--err-fg)]">{valueText(c.before).slice(0, 2000)}</td>
                      <td className="break-all px-2 py-1 text-green-700 dark:text-green-400">{valueText(c.after).slice(0, 2000)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {selected.changes.length === 0 && (
              <p className="text-xs text-[var(--muted)]">
                {selected.class === "no-op"
                  ? "This request changed nothing: the API server answered with the object as it was (same resourceVersion, or equal once ignored fields are left out)."
                  : selected.class === "unknown"
                    ? "The audit log kept no bodies for this request (Metadata level), or it is the first version seen of this object: nothing to compare."
                    : "Only ignored fields changed (or the object was created or deleted)."}
              </p>
            )}
          </>
        ) : (
          <p className="text-[var(--muted)]">Click a write tick to see what it changed, who wrote it, and whether the consumer&apos;s view changed.</p>
        )}
      </section>
    </main>
  );
}
