"use client";
/**
 * Range picker: relative presets, absolute from/to (any form the URL accepts), shift and zoom out.
 * It edits `from`/`to` strings; the view keeps them in the URL.
 */
import { useState } from "react";
import { formatRange } from "@/lib/format/time";
import { parseTimeExpr } from "@/lib/time/range";

const PRESETS = ["now-15m", "now-1h", "now-3h", "now-6h", "now-12h", "now-24h", "now-2d", "now-7d"];

export interface TimeRangePickerProps {
  from: string;
  to: string;
  startMs: number;
  endMs: number;
  onChange: (from: string, to: string) => void;
  onRefresh: () => void;
  /** twice the range around its middle; undefined where the view cannot widen (a snapshot's held range) */
  onZoomOut?: () => void;
}

export function TimeRangePicker({ from, to, startMs, endMs, onChange, onRefresh, onZoomOut }: TimeRangePickerProps) {
  const [open, setOpen] = useState(false);
  const [draftFrom, setDraftFrom] = useState(from);
  const [draftTo, setDraftTo] = useState(to);
  const [error, setError] = useState<string | null>(null);
  const relative = to === "now" && from.startsWith("now-");
  const length = endMs - startMs;

  const apply = () => {
    const f = parseTimeExpr(draftFrom);
    const t = parseTimeExpr(draftTo);
    if (!f.ok) return setError(`From: ${f.error}`);
    if (!t.ok) return setError(`To: ${t.error}`);
    setError(null);
    setOpen(false);
    onChange(draftFrom.trim(), draftTo.trim());
  };
  const absolute = (s: number, e: number) => onChange(String(Math.round(s)), String(Math.round(e)));

  return (
    <div className="relative flex items-center gap-1 text-sm">
      <button
        type="button"
        className="rounded border border-[var(--border)] px-2 py-1"
        onClick={() => absolute(startMs - length / 2, endMs - length / 2)}
        title="Shift back by half the range"
      >
        ‹
      </button>
      <button
        type="button"
        data-testid="range-button"
        className="rounded border border-[var(--border)] bg-[var(--panel)] px-3 py-1 tabular"
        onClick={() => {
          setDraftFrom(from);
          setDraftTo(to);
          setOpen(!open);
        }}
        aria-expanded={open}
      >
        {relative ? `Last ${from.slice(4)}` : formatRange(startMs, endMs)}
      </button>
      <button
        type="button"
        className="rounded border border-[var(--border)] px-2 py-1"
        onClick={() => absolute(startMs + length / 2, endMs + length / 2)}
        title="Shift forward by half the range"
      >
        ›
      </button>
      <ZoomOutButton onZoomOut={onZoomOut} />
      <button
        type="button"
        className="rounded border border-[var(--border)] px-2 py-1"
        onClick={onRefresh}
        title="Refresh (re-reads 'now' for relative ranges)"
        data-testid="refresh"
      >
        ⟳
      </button>
      {open && (
        <div className="absolute right-0 top-9 z-20 flex w-[30rem] gap-4 rounded-md border border-[var(--border)] bg-[var(--panel)] p-3 shadow-lg">
          <ul className="w-28 space-y-1">
            {PRESETS.map((p) => (
              <li key={p}>
                <button
                  type="button"
                  className={`w-full rounded px-2 py-0.5 text-left hover:bg-[var(--bg)] ${p === from && relative ? "font-semibold" : ""}`}
                  onClick={() => {
                    setOpen(false);
                    onChange(p, "now");
                  }}
                >
                  Last {p.slice(4)}
                </button>
              </li>
            ))}
          </ul>
          <form
            className="flex flex-1 flex-col gap-2"
            onSubmit={(e) => {
              e.preventDefault();
              apply();
            }}
          >
            <label className="text-xs text-[var(--muted)]">
              From
              <input
                name="from"
                className="mt-0.5 w-full rounded border border-[var(--border)] bg-[var(--bg)] px-2 py-1 font-mono text-sm text-[var(--fg)]"
                value={draftFrom}
                onChange={(e) => setDraftFrom(e.target.value)}
              />
            </label>
            <label className="text-xs text-[var(--muted)]">
              To
              <input
                name="to"
                className="mt-0.5 w-full rounded border border-[var(--border)] bg-[var(--bg)] px-2 py-1 font-mono text-sm text-[var(--fg)]"
                value={draftTo}
                onChange={(e) => setDraftTo(e.target.value)}
              />
            </label>
            <p className="text-xs text-[var(--muted)]">now-6h, 2026-09-11T13:12:00Z, or epoch ms. Times are UTC.</p>
            {error && <p className="text-xs text-[var(--err-fg)]">{error}</p>}
            <button type="submit" className="self-start rounded bg-[var(--accent)] px-3 py-1 text-sm text-white">
              Apply
            </button>
          </form>
        </div>
      )}
    </div>
  );
}

/** Twice the range around its middle: the way back from a zoom dragged on a chart (so is the browser's Back). */
export function ZoomOutButton({ onZoomOut }: { onZoomOut?: () => void }) {
  if (!onZoomOut) return null;
  return (
    <button
      type="button"
      data-testid="zoom-out"
      className="rounded border border-[var(--border)] px-2 py-1 text-sm"
      onClick={onZoomOut}
      title="Zoom out: twice the range (drag across a chart to zoom in)"
      aria-label="Zoom out"
    >
      −
    </button>
  );
}
