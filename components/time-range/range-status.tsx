/** Under the toolbar: the snapshot banner, the resolved range in UTC, and a visible note when the link's range was invalid. */
import { SnapshotBanner } from "@/components/snapshot/snapshot-banner";
import { formatRange } from "@/lib/format/time";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";

interface Props {
  snapshot?: SnapshotInfo;
  /** the page, when it reads the snapshot's panels (object pages read its object writes instead) */
  view?: SnapshotInfo["views"][number];
  startMs: number;
  endMs: number;
  /** problems with the link's from/to, and what is shown instead */
  errors: string[];
  fallback: string;
  note?: string;
}

export function RangeStatus({ snapshot, view, startMs, endMs, errors, fallback, note }: Props) {
  return (
    <>
      {snapshot && <SnapshotBanner info={snapshot} startMs={startMs} endMs={endMs} view={view} />}
      <p className="text-xs text-[var(--muted)] tabular" data-testid="resolved-range">
        {formatRange(startMs, endMs)} (UTC){note ? ` · ${note}` : ""}
      </p>
      {errors.length > 0 && (
        <div role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]">
          The link&apos;s time range is not valid ({errors.join("; ")}). Showing {fallback} instead.
        </div>
      )}
    </>
  );
}
