"use client";
/**
 * The right-hand controls every page shares: the range (a snapshot offers only its own ranges),
 * "Download snapshot" for what is on screen, and "Open snapshot…".
 */
import { OpenSnapshot } from "@/components/snapshot/open-snapshot";
import { formatRange } from "@/lib/format/time";
import type { SnapshotInfo } from "@/lib/snapshot/schema";
import { TimeRangePicker, type TimeRangePickerProps } from "./time-range-picker";

interface Props extends TimeRangePickerProps {
  snapshot?: SnapshotInfo;
  /** the export endpoint's parameters for this view; without them there is no download */
  download?: Record<string, string | number | undefined>;
}

export function ViewControls({ snapshot, from, to, startMs, endMs, onChange, onRefresh, download }: Props) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...download, snapshot: snapshot?.id })) if (value !== undefined) search.set(key, String(value));
  return (
    <div className="ml-auto flex flex-wrap items-center gap-2">
      {snapshot ? (
        <span className="flex gap-1 text-sm" data-testid="snapshot-ranges">
          {snapshot.ranges.map((r) => (
            <button
              key={`${r.startMs}-${r.endMs}`}
              type="button"
              aria-pressed={r.startMs === startMs && r.endMs === endMs}
              className="rounded border border-[var(--border)] px-2 py-1 aria-pressed:bg-[var(--accent)] aria-pressed:text-white"
              onClick={() => onChange(String(r.startMs), String(r.endMs))}
            >
              {r.label ?? formatRange(r.startMs, r.endMs)}
            </button>
          ))}
        </span>
      ) : (
        <TimeRangePicker from={from} to={to} startMs={startMs} endMs={endMs} onChange={onChange} onRefresh={onRefresh} />
      )}
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
      <OpenSnapshot />
    </div>
  );
}

/** A snapshot answers only its own ranges: a link with another range opens the first one. */
export function snapshotRange(snapshot: SnapshotInfo | undefined, resolved: { startMs: number; endMs: number }) {
  if (!snapshot) return resolved;
  return snapshot.ranges.find((r) => r.startMs === resolved.startMs && r.endMs === resolved.endMs) ?? snapshot.ranges[0];
}
