"use client";
/**
 * The compare view: two counters counted window by window, both counts and their ratio per
 * window, as the Connector churn write-up did by hand for reconciles vs status writes and hub vs project writes.
 * The counters, the window and the range are all in the URL.
 */
import { ChartZoomContext } from "@/components/panels/chart-zoom";
import { parseAsString, useQueryStates } from "nuqs";
import { useState } from "react";
import { PanelFrame } from "@/components/panels/panel-frame";
import { TimeSeriesChart, type ChartMarker } from "@/components/panels/time-series-chart";
import { RangeStatus } from "@/components/time-range/range-status";
import { MarkerList } from "@/components/panels/marker-list";
import { useViewRange } from "@/components/time-range/use-view-range";
import { ViewControls } from "@/components/time-range/view-controls";
import { compareWindow, SELECTOR_HELP, WINDOW_PRESETS, type ComparePreset, type CounterPreset } from "@/lib/compare/catalog";
import { parseSelector } from "@/lib/promql/parse";
import { compareRows } from "@/lib/compare/table";
import { CsvLink } from "@/components/panels/csv-link";
import { formatCount } from "@/lib/format/number";
import { formatRange } from "@/lib/format/time";
import type { PanelData } from "@/lib/panels/run-panel";
import { usePanel } from "@/lib/query/hooks";
import { useViewMarkers } from "@/components/panels/onset-marker";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";

const urlState = {
  from: parseAsString.withDefault("now-2d"),
  to: parseAsString.withDefault("now"),
  a: parseAsString,
  b: parseAsString,
  // Written to the URL whenever chosen, so a shared link still means 3 h if the default changes; absent, the preset's.
  window: parseAsString,
};

interface Props {
  initialNowMs: number;
  counters: CounterPreset[];
  presets: ComparePreset[];
  snapshot?: SnapshotInfo;
}

export function CompareView({ initialNowMs, counters, presets, snapshot }: Props) {
  const [url, setUrl] = useQueryStates(urlState, { history: "push" });
  const { startMs, endMs, errors, controls, onZoom } = useViewRange(initialNowMs, snapshot, url.from, url.to, (from, to) => void setUrl({ from, to }));
  const fallback = presets[0];
  const a = url.a ?? fallback?.a ?? "";
  const b = url.b ?? fallback?.b ?? "";
  const asked = url.window ?? (url.a === null && url.b === null && fallback ? fallback.window : "3h");
  // A window it cannot count in is said, and the default counted instead.
  const askedWindow = compareWindow(asked);
  const window = askedWindow.ok ? asked : "3h";
  const notices = askedWindow.ok ? [] : [`window ${askedWindow.error}: counting per 3h instead`];
  const titleOf = (selector: string) => counters.find((c) => c.selector === selector)?.title;
  const ready = parseSelector(a).ok && parseSelector(b).ok;
  const query = usePanel({ panel: "compare", startMs, endMs, width: 1000, snapshot: snapshot?.id, args: { a, b, window } }, ready);
  const same = (x: { a: string; b: string; window: string }, y: typeof x) => x.a === y.a && x.b === y.b && x.window === y.window;
  const picks = snapshot
    ? snapshot.comparisons.map((c) => ({
        ...c,
        title: presets.find((p) => same(p, c))?.title ?? `${titleOf(c.a) ?? c.a} vs ${titleOf(c.b) ?? c.b}, per ${c.window}`,
      }))
    : presets;
  const { markers } = useViewMarkers(startMs, endMs, snapshot);

  return (
    <ChartZoomContext value={onZoom}>
      <main className="mx-auto max-w-[1600px] space-y-3 p-3">
        <div className="flex flex-wrap items-center gap-3">
          <h1 className="text-lg font-semibold">Compare counters</h1>
          <ViewControls snapshot={snapshot} {...controls} download={{ view: "compare", a, b, window }} />
        </div>
        <RangeStatus snapshot={snapshot} view="compare" startMs={startMs} endMs={endMs} errors={errors} fallback="the last 2 days" notices={notices} />
        <MarkerList markers={markers} />

        <section className="space-y-2 rounded-md border border-[var(--border)] bg-[var(--panel)] p-3 text-sm">
          {picks.length > 0 && (
            <div className="flex flex-wrap items-center gap-2" data-testid="compare-presets">
              <span className="text-[var(--muted)]">{snapshot ? "Held in this snapshot:" : "The Connector churn write-up's tables:"}</span>
              {picks.map((p) => (
                <button
                  key={`${p.a}|${p.b}|${p.window}`}
                  type="button"
                  aria-pressed={same(p, { a, b, window })}
                  className="rounded border border-[var(--border)] px-2 py-1 text-xs aria-pressed:border-[var(--accent)] aria-pressed:font-semibold"
                  onClick={() => void setUrl({ a: p.a, b: p.b, window: p.window })}
                >
                  {p.title}
                </button>
              ))}
            </div>
          )}
          <CounterInput side="a" value={a} counters={counters} onCommit={(v) => void setUrl({ a: v, b, window })} />
          <CounterInput side="b" value={b} counters={counters} onCommit={(v) => void setUrl({ a, b: v, window })} />
          <WindowPicker value={window} onCommit={(v) => void setUrl({ a, b, window: v })} />
          <p className="text-xs text-[var(--muted)]">{SELECTOR_HELP}</p>
        </section>

        <PanelFrame
          id="compare"
          title={`A vs B per ${window}`}
          description="Both counts in each window that ends at the time shown, and A ÷ B."
          state={query}
          idleMessage={ready ? undefined : "Type two valid counters to compare."}
        >
          {(data) => <CompareBody data={data} markers={markers} titleA={titleOf(a) ?? "A"} titleB={titleOf(b) ?? "B"} />}
        </PanelFrame>
      </main>
    </ChartZoomContext>
  );
}

function CompareBody({ data, markers, titleA, titleB }: { data: PanelData; markers: ChartMarker[]; titleA: string; titleB: string }) {
  const { rows, total } = compareRows(data);
  const cell = (v: number | null) => (v === null ? "no data" : formatCount(v));
  const ratio = (v: number | null) => (v === null ? "—" : v.toFixed(3));
  return (
    <>
      <TimeSeriesChart
        series={data.series}
        unit="count"
        stacked={false}
        startMs={data.startMs}
        endMs={data.endMs}
        markers={markers}
        nameOf={(l) => `${l.series}: ${l.series === "A" ? titleA : titleB}`}
      />
      <div className="mt-3 flex justify-end">
        <CsvLink
          name="compare"
          testId="compare-csv"
          header={["window_start_utc", "window_end_utc", "window_end_ms", `A ${titleA}`, `B ${titleB}`, "A/B"]}
          rows={() => [
            ...rows.map((r) => [new Date(r.startMs).toISOString(), new Date(r.endMs).toISOString(), r.endMs, r.a, r.b, r.ratio]),
            ["all windows", "", "", total.a, total.b, total.ratio],
          ]}
        />
      </div>
      <div className="mt-1 max-h-[28rem] overflow-auto">
        <table className="w-full text-sm tabular" data-testid="compare-table">
          <thead className="sticky top-0 bg-[var(--panel)] text-left text-xs text-[var(--muted)]">
            <tr>
              <th className="py-1 pr-3 font-normal">Window (UTC)</th>
              <th className="py-1 pr-3 text-right font-normal">A · {titleA}</th>
              <th className="py-1 pr-3 text-right font-normal">B · {titleB}</th>
              <th className="py-1 text-right font-normal">A ÷ B</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.endMs} data-window-end={r.endMs} className="border-t border-[var(--border)]">
                <td className="py-1 pr-3">{formatRange(r.startMs, r.endMs)}</td>
                <td className="py-1 pr-3 text-right font-mono" data-cell="a">
                  {cell(r.a)}
                </td>
                <td className="py-1 pr-3 text-right font-mono" data-cell="b">
                  {cell(r.b)}
                </td>
                <td className="py-1 text-right font-mono" data-cell="ratio">
                  {ratio(r.ratio)}
                </td>
              </tr>
            ))}
            <tr className="border-t-2 border-[var(--border)] font-semibold" data-testid="compare-total">
              <td className="py-1 pr-3">All {rows.length} windows</td>
              <td className="py-1 pr-3 text-right font-mono">{cell(total.a)}</td>
              <td className="py-1 pr-3 text-right font-mono">{cell(total.b)}</td>
              <td className="py-1 text-right font-mono">{ratio(total.ratio)}</td>
            </tr>
          </tbody>
        </table>
      </div>
    </>
  );
}

function CounterInput({ side, value, counters, onCommit }: { side: "a" | "b"; value: string; counters: CounterPreset[]; onCommit: (v: string) => void }) {
  const [text, setText] = useState<string | null>(null);
  const shown = text ?? value;
  const parsed = parseSelector(shown);
  const commit = () => {
    if (!parsed.ok) return;
    setText(null);
    if (parsed.text !== value) onCommit(parsed.text);
  };
  return (
    <div className="flex flex-wrap items-start gap-2">
      <span className="mt-1 w-5 font-semibold">{side.toUpperCase()}</span>
      <select
        aria-label={`counter ${side.toUpperCase()} from the catalog`}
        className="rounded border border-[var(--border)] bg-[var(--panel)] px-1 py-1 text-xs"
        value={counters.find((c) => c.selector === value)?.id ?? ""}
        onChange={(e) => {
          const pick = counters.find((c) => c.id === e.target.value);
          if (pick) onCommit(pick.selector);
        }}
      >
        <option value="">Catalog…</option>
        {counters.map((c) => (
          <option key={c.id} value={c.id}>
            {c.title}
          </option>
        ))}
      </select>
      <div className="min-w-0 flex-1 basis-[20rem]">
        <input
          data-testid={`selector-${side}`}
          spellCheck={false}
          className="w-full rounded border border-[var(--border)] bg-[var(--bg)] px-2 py-1 font-mono text-xs"
          value={shown}
          onChange={(e) => setText(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => e.key === "Enter" && commit()}
        />
        <div className="mt-0.5 break-all font-mono text-[11px] text-[var(--muted)]" data-testid={`selector-${side}-status`}>
          {parsed.ok ? `sum(increase(${parsed.text}[window]))` : <span className="text-[var(--err-fg)]">{parsed.error}</span>}
        </div>
      </div>
    </div>
  );
}

function WindowPicker({ value, onCommit }: { value: string; onCommit: (v: string) => void }) {
  const [custom, setCustom] = useState<string | null>(null);
  return (
    <div className="flex items-center gap-2">
      <span className="text-[var(--muted)]">Window</span>
      {WINDOW_PRESETS.map((w) => (
        <button
          key={w}
          type="button"
          aria-pressed={w === value}
          onClick={() => onCommit(w)}
          className="rounded border border-[var(--border)] px-2 py-0.5 text-xs aria-pressed:bg-[var(--accent)] aria-pressed:text-white"
        >
          {w}
        </button>
      ))}
      <input
        data-testid="window-input"
        aria-label="custom window"
        placeholder="e.g. 12h"
        className="w-28 rounded border border-[var(--border)] bg-[var(--bg)] px-2 py-0.5 font-mono text-xs"
        value={custom ?? ((WINDOW_PRESETS as readonly string[]).includes(value) ? "" : value)}
        onChange={(e) => setCustom(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && e.currentTarget.value.trim()) {
            onCommit(e.currentTarget.value.trim());
            setCustom(null);
          }
        }}
      />
    </div>
  );
}
