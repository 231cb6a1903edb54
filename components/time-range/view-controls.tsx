"use client";
/**
 * The right-hand controls every page shares: the range (a snapshot offers its own ranges and zooms inside them),
 * notes (live, or on the snapshot), "Copy link", "Download snapshot" for what is on screen, and "Open snapshot…".
 */
import { usePathname } from "next/navigation";
import { useState } from "react";
import { OpenSnapshot } from "@/components/snapshot/open-snapshot";
import { formatRange } from "@/lib/format/time";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { NotesControl } from "./notes-control";
import { TimeRangePicker, ZoomOutButton, type TimeRangePickerProps } from "./time-range-picker";

interface Props extends TimeRangePickerProps {
  snapshot?: SnapshotInfo;
  /** the export endpoint's parameters for this view besides the range (added here); without them there is no download */
  download?: Record<string, string | number | undefined>;
}

export function ViewControls({ snapshot, from, to, startMs, endMs, onChange, onRefresh, onZoomOut, download }: Props) {
  const search = new URLSearchParams();
  // The page it is taken on, where the bundle opens again.
  const page = usePathname();
  for (const [key, value] of Object.entries({ ...download, from: startMs, to: endMs, snapshot: snapshot?.id, page }))
    if (value !== undefined) search.set(key, String(value));
  return (
    <div className="ml-auto flex flex-wrap items-center gap-2">
      {snapshot ? (
        <span className="flex flex-wrap items-center gap-1 text-sm" data-testid="snapshot-ranges">
          {snapshot.ranges.map((r) => (
            <button
              key={`${r.startMs}-${r.endMs}`}
              type="button"
              aria-pressed={r.startMs === startMs && r.endMs === endMs}
              className="whitespace-nowrap rounded border border-[var(--border)] px-2 py-1 aria-pressed:bg-[var(--accent)] aria-pressed:text-white"
              onClick={() => onChange(String(r.startMs), String(r.endMs))}
            >
              {r.label ?? formatRange(r.startMs, r.endMs)}
            </button>
          ))}
          {onZoomOut && (
            <span
              data-testid="snapshot-zoom"
              className="flex items-center gap-1 tabular"
              title="A snapshot holds its points at the step it was taken with: zooming in shows those points, never finer ones"
            >
              <span className="text-[var(--muted)]">
                zoomed to {formatRange(startMs, endMs)}
                <span className="hidden sm:inline">, at the held step</span>
              </span>
              <ZoomOutButton onZoomOut={onZoomOut} />
            </span>
          )}
        </span>
      ) : (
        <TimeRangePicker from={from} to={to} startMs={startMs} endMs={endMs} onChange={onChange} onRefresh={onRefresh} onZoomOut={onZoomOut} />
      )}
      <NotesControl startMs={startMs} endMs={endMs} snapshot={snapshot?.id} />
      <CopyLink startMs={startMs} endMs={endMs} />
      {download && (
        <a
          data-testid="download-snapshot"
          className="rounded border border-[var(--border)] px-2 py-1 text-sm hover:bg-[var(--bg)]"
          href={`/api/snapshots/export?${search}`}
          title="Download this view's data for this range as a snapshot bundle (.json.gz) that opens without Prometheus"
        >
          Download snapshot
        </a>
      )}
      {download && !snapshot && (download.view === undefined || download.view === "rebuilds") && (
        <a
          data-testid="download-grafana"
          className="rounded border border-[var(--border)] px-2 py-1 text-sm hover:bg-[var(--bg)]"
          href={`/api/grafana?${grafanaSearch(search)}`}
          // The links back in the dashboard lead where this browser reached Churnscope.
          onClick={(e) => (e.currentTarget.href = `/api/grafana?${grafanaSearch(search)}&base=${encodeURIComponent(window.location.origin)}`)}
          title="Download this view as a Grafana dashboard (JSON): the same PromQL, with the API server and resource as variables and links back here"
        >
          Grafana JSON
        </a>
      )}
      <OpenSnapshot />
    </div>
  );
}

/** "Copy link": this view's URL with a relative range frozen to the absolute times on screen, so it shows the same later. */
function CopyLink({ startMs, endMs }: { startMs: number; endMs: number }) {
  const [link, setLink] = useState<string | null>(null);
  return (
    <span className="relative text-sm">
      <button
        type="button"
        data-testid="copy-link"
        className="rounded border border-[var(--border)] px-2 py-1 hover:bg-[var(--bg)]"
        title="Copy a link to exactly this view and time range"
        onClick={() => {
          const url = new URL(window.location.href);
          url.searchParams.set("from", String(startMs));
          url.searchParams.set("to", String(endMs));
          setLink(url.toString());
          void navigator.clipboard?.writeText(url.toString()).catch(() => undefined);
        }}
      >
        Copy link
      </button>
      {link && (
        <span className="absolute right-0 top-9 z-10 flex w-[32rem] items-center gap-2 rounded border border-[var(--border)] bg-[var(--panel)] p-2 shadow">
          <input
            data-testid="copied-link"
            readOnly
            value={link}
            className="flex-1 rounded border border-[var(--border)] bg-[var(--bg)] px-1 font-mono text-xs"
            onFocus={(e) => e.currentTarget.select()}
          />
          <button type="button" className="text-xs text-[var(--muted)]" onClick={() => setLink(null)} aria-label="close">
            ✕
          </button>
        </span>
      )}
    </span>
  );
}

/** The Grafana export's parameters: the view's, with the view named (Write load when none is). */
function grafanaSearch(search: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams(search);
  if (!out.has("view")) out.set("view", "write-load");
  out.delete("page");
  return out;
}
