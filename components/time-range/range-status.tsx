/**
 * Under the toolbar: the snapshot banner, the resolved range in UTC, and one notice naming each of the link's values the
 * page cannot use (its range, a site, a time) and what it shows instead.
 */
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
  /** the link's other parameters the page cannot use, each naming what is shown instead (lib/format/param-notices) */
  notices?: string[];
}

export function RangeStatus({ snapshot, view, startMs, endMs, errors, fallback, note, notices = [] }: Props) {
  // The range shown instead is named as it is: a snapshot shows its own range, not the live default.
  const problems = [
    ...(errors.length > 0
      ? [
          `the time range is not valid (${errors.join("; ")}): showing ${snapshot ? "the snapshot's range" : fallback}, ${formatRange(startMs, endMs)} UTC, instead`,
        ]
      : []),
    ...notices,
  ];
  return (
    <>
      {snapshot && <SnapshotBanner info={snapshot} startMs={startMs} endMs={endMs} view={view} />}
      <p className="text-xs text-[var(--muted)] tabular" data-testid="resolved-range">
        {formatRange(startMs, endMs)} (UTC){note ? ` · ${note}` : ""}
      </p>
      {problems.length > 0 && (
        <div role="alert" data-testid="link-notice" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]">
          {problems.length === 1 ? (
            <>The link&apos;s {problems[0]}.</>
          ) : (
            <>
              The link asks for what this page cannot show:
              <ul className="ml-5 list-disc">
                {problems.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
    </>
  );
}
