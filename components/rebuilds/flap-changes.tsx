"use client";
/**
 * On Edge rebuilds: the routed changes the store saw in the range (each one rebuilds every edge site), those that were
 * half of a flap (undone within a minute) told apart from those that lasted, per step, on the rebuild charts' axis.
 */
import Link from "next/link";
import { TimeSeriesChart } from "@/components/panels/time-series-chart";
import { formatNumber } from "@/lib/format/number";
import { apiUrl, useApi } from "@/lib/query/hooks";
import type { Series } from "@/lib/promql/types";
import type { FlapsAnswer } from "@/lib/wire/traits";

const seriesOf = (steps: FlapsAnswer["flaps"]["steps"]): Series[] =>
  (["lasting", "flap"] as const).map((part) => ({
    labels: { part: part === "flap" ? "half of a flap" : "lasted" },
    points: steps[part].map((n, i) => [steps.startMs + (i + 1) * steps.stepMs, n] as [number, number]),
  }));

export function FlapChanges({ startMs, endMs, snapshot }: { startMs: number; endMs: number; snapshot?: string }) {
  const answer = useApi<FlapsAnswer>(apiUrl("/api/objects/flaps", { from: startMs, to: endMs, snapshot }));
  const data = answer.data?.data;
  const flaps = data?.flaps;
  return (
    <section data-testid="flap-changes" data-state={flaps ? "ready" : "loading"} className="rounded-md border border-[var(--border)] bg-[var(--panel)] p-3">
      <div className="flex flex-wrap items-baseline gap-3">
        <h2 className="text-sm font-semibold">Routed changes behind the rebuilds: flaps told apart</h2>
        <Link prefetch={false} className="text-xs text-[var(--accent)] hover:underline" href={apiUrl("/objects", { from: startMs, to: endMs, snapshot })}>
          Flaps and a hold-down what-if on Objects →
        </Link>
      </div>
      {answer.error && <p className="text-sm text-[var(--err-fg)]">{answer.error.message}</p>}
      {flaps && (
        <>
          <p className="my-1 text-sm" data-testid="flap-sentence">
            {flaps.changes === 0 ? (
              "No routed change was recorded in this range."
            ) : (
              <>
                Of <b data-figure="changes">{formatNumber(flaps.changes, true)}</b> routed changes recorded (each rebuilds every edge site),{" "}
                <b data-figure="flap-changes">{formatNumber(flaps.flapChanges, true)}</b> were half of a flap: a change undone within{" "}
                {formatNumber(flaps.windowMs / 1000)} s ({formatNumber(flaps.flaps, true)} flaps on {formatNumber(flaps.objectsFlapping, true)} objects,{" "}
                {formatNumber(flaps.flapsPerHour)} per hour).
              </>
            )}
          </p>
          {flaps.changes > 0 && (
            <TimeSeriesChart series={seriesOf(flaps.steps)} unit="changes" stacked startMs={startMs} endMs={endMs} height={120} nameOf={(l) => l.part} />
          )}
        </>
      )}
    </section>
  );
}
