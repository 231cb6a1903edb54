"use client";
/**
 * One object's timeline: a band for the routed projection (what the consumer acts on), a lane per
 * most-changed field and every write of the range on a UTC time axis, with the page's markers; the
 * picked write's diff below, stepped through with ←/→. A drag zooms the range, Back undoes it.
 */
import Link from "next/link";
import { useQueryClient } from "@tanstack/react-query";
import { parseAsInteger, parseAsString, useQueryStates } from "nuqs";
import { useEffect, useRef } from "react";
import { useElementWidth } from "@/components/panels/use-element-width";
import { ApiNotices, StoreLoading } from "./api-notices";
import { RangeStatus } from "@/components/time-range/range-status";
import { useViewRange } from "@/components/time-range/use-view-range";
import { ViewControls } from "@/components/time-range/view-controls";
import { fetchEnvelope } from "@/lib/api/fetch-envelope";
import { apiUrl, useApi } from "@/lib/query/hooks";
import { useViewMarkers } from "@/components/panels/onset-marker";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import type { ObjectKey, ObjectTimelineAnswer, PickedWriteAnswer, PickOnly } from "@/lib/wire/objects";
import { objectPath } from "@/lib/objects/key";
import { MAX_TIMELINE_COLUMNS } from "@/lib/objects/timeline";
import { CLASS_COLORS } from "./object-link";
import { TimelineChart } from "./timeline-chart";
import { WriteDiff } from "./write-diff";
import { WritesCsv } from "./writes-csv";
import { MarkerList } from "@/components/panels/marker-list";
import { DEFAULT_FROM, DEFAULT_TO } from "@/lib/time/range";

const urlState = { from: parseAsString.withDefault(DEFAULT_FROM), to: parseAsString.withDefault(DEFAULT_TO), write: parseAsInteger };
const LABEL_WIDTH = 260;
const PHONE_LABEL_WIDTH = 120;

/** Keys typed into a field are the field's, not the timeline's. */
const typing = (target: EventTarget | null) => target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName));

export function TimelineView({ initialNowMs, snapshot, objectKey }: { initialNowMs: number; snapshot?: SnapshotInfo; objectKey: ObjectKey }) {
  const [url, setUrl] = useQueryStates(urlState, { history: "push" });
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const queryClient = useQueryClient();
  const { startMs, endMs, errors, controls, onZoom } = useViewRange(initialNowMs, snapshot, url.from, url.to, (from, to) => void setUrl({ from, to }));
  const labelWidth = width < 640 ? PHONE_LABEL_WIDTH : LABEL_WIDTH;
  const columns = Math.min(MAX_TIMELINE_COLUMNS, Math.max(1, Math.round(width - labelWidth)));
  const path = `/api/objects/${objectPath(objectKey)}`;
  const answer = useApi<ObjectTimelineAnswer>(
    width > 0 ? apiUrl(`${path}/timeline`, { from: startMs, to: endMs, width: columns, snapshot: snapshot?.id }) : null,
  );
  const writeUrl = (how: { seq: number; step?: number; only?: PickOnly } | { near: number; only?: PickOnly }) =>
    apiUrl(`${path}/write`, { ...how, from: startMs, to: endMs, snapshot: snapshot?.id });
  const picked = useApi<PickedWriteAnswer>(url.write === null ? null : writeUrl({ seq: url.write }));
  const { markers } = useViewMarkers(startMs, endMs, snapshot);
  const data = answer.data?.data;
  const current = picked.data?.data;

  /** Picks a write: one request, whose answer is also the picked write's. A click adds a history entry, a key replaces it. */
  const pick = async (how: Parameters<typeof writeUrl>[0], history: "push" | "replace") => {
    try {
      const found = await fetchEnvelope<PickedWriteAnswer>(writeUrl(how));
      queryClient.setQueryData(["api", writeUrl({ seq: found.data.write.seq })], found);
      await setUrl({ write: found.data.write.seq }, { history });
      return found.data.write.seq;
    } catch {
      return undefined; // No such write in the range: nothing to pick.
    }
  };
  const pickNear = (tsMs: number) => void pick({ near: Math.round(tsMs) }, "push");

  // Moves asked for while one is on its way queue up: two presses of → move two writes, however fast they come.
  const moves = useRef<{ step: number; only?: PickOnly }[]>([]);
  const moving = useRef(false);
  const seqRef = useRef(url.write);
  seqRef.current = url.write;
  const move = (step: number, only?: PickOnly) => {
    const last = moves.current.at(-1);
    if (last && last.only === only) last.step += step;
    else moves.current.push({ step, only });
    if (moving.current) return;
    moving.current = true;
    void (async () => {
      while (moves.current.length > 0) {
        const next = moves.current.shift()!;
        const from = seqRef.current;
        const to = await pick(
          from === null
            ? { near: next.step > 0 ? startMs : endMs, ...(next.only && { only: next.only }) }
            : { seq: from, step: next.step, ...(next.only && { only: next.only }) },
          "replace",
        );
        if (to !== undefined) seqRef.current = to;
      }
      moving.current = false;
    })();
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey || typing(e.target)) return;
      const action: (() => void) | undefined = {
        ArrowRight: () => move(1),
        ArrowLeft: () => move(-1),
        Home: () => void pick({ near: startMs }, "replace"),
        End: () => void pick({ near: endMs }, "replace"),
        n: () => move(1, "routed"),
        N: () => move(-1, "routed"),
        m: () => move(1, "marked"),
        M: () => move(-1, "marked"),
      }[e.key];
      if (!action) return;
      e.preventDefault();
      action();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

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
        <ViewControls
          snapshot={snapshot}
          {...controls}
          download={{
            view: "objects",
            cluster: objectKey.cluster,
            group: objectKey.group || undefined,
            kind: objectKey.kind,
            namespace: objectKey.namespace || undefined,
          }}
        />
      </div>
      <RangeStatus snapshot={snapshot} startMs={startMs} endMs={endMs} errors={errors} fallback="the last 6 hours" />
      <ApiNotices error={answer.error} answer={answer.data} retry={answer.refetch} />
      <MarkerList markers={markers.filter((m) => m.timeMs >= startMs && m.timeMs <= endMs)} />
      <section
        data-testid="timeline"
        data-state={answer.isLoading || width === 0 ? "loading" : data ? "ready" : "idle"}
        className="rounded-md border border-[var(--border)] bg-[var(--panel)] p-3"
      >
        {answer.isLoading || width === 0 ? (
          <StoreLoading snapshot={snapshot !== undefined} />
        ) : (
          data && (
            <p className="mb-2 text-xs" data-testid="write-counts">
              {data.total.toLocaleString("en-US")} writes:{" "}
              {Object.entries(data.byClass).map(([cls, n], i) => (
                <span key={cls}>
                  {i > 0 ? ", " : ""}
                  <span style={{ color: CLASS_COLORS[cls] }}>
                    {n.toLocaleString("en-US")} {cls}
                  </span>
                </span>
              ))}
              <span className="text-[var(--muted)]">
                {" "}
                · band: what the consumer routes on (green = online); bars: writes per pixel by class
                {data.marks.length > 0 ? "; echoes · clocks: echoes (grey), clock-only writes (amber), condition clock faults (brown)" : ""}. Click for the
                nearest write, ←/→ to step (Home/End the first and last, n/N the next and previous routed write, m/M the next and previous marked one), drag to
                zoom.
              </span>{" "}
              <WritesCsv path={path} startMs={startMs} endMs={endMs} snapshot={snapshot?.id} name={`${objectKey.kind}-${objectKey.name}`} />
            </p>
          )
        )}
        <div ref={ref} className="w-full overflow-hidden">
          {width > 0 && data && (
            <TimelineChart
              timeline={data}
              width={width}
              labelWidth={labelWidth}
              markers={markers}
              selectedMs={current?.write.tsMs}
              onPick={(tsMs) => void pickNear(tsMs)}
              onZoom={onZoom}
            />
          )}
        </div>
        {data && data.total === 0 && <p className="py-6 text-center text-sm text-[var(--muted)]">No writes to this object in this range.</p>}
      </section>
      <section data-testid="diff" className="rounded-md border border-[var(--border)] bg-[var(--panel)] p-3 text-sm" aria-live="polite">
        <WriteDiff picked={current} loading={picked.isLoading} error={picked.error} onStep={(seq) => void setUrl({ write: seq })} onMove={move} />
      </section>
    </main>
  );
}
