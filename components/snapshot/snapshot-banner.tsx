/** Says plainly that the page shows a snapshot (and, for the replay, a reconstruction) and not live data. */
import { formatRange, formatUtc } from "@/lib/format/time";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { holdingRange } from "@/lib/snapshot/format/view-range";

export function SnapshotBanner({ info, startMs, endMs, view }: { info: SnapshotInfo; startMs: number; endMs: number; view?: SnapshotInfo["views"][number] }) {
  const replay = info.source === "replay";
  const missing = view !== undefined && !info.views.includes(view);
  // A zoom shows part of a held range: the banner names the held range, the range line below it the zoom.
  const held = holdingRange(info.ranges, { startMs, endMs }) ?? { startMs, endMs };
  return (
    <section data-testid="snapshot-banner" className="rounded border border-[var(--warn-fg)] bg-[var(--warn-bg)] px-3 py-2 text-sm text-[var(--fg)]">
      <p className="font-semibold">
        {replay ? "Replay: " : "Snapshot: "}
        {info.title}
      </p>
      <p className="tabular">
        Snapshot of {formatRange(held.startMs, held.endMs)} (UTC), taken {formatUtc(info.takenAtMs)}. Not live data: the numbers are frozen in the bundle.
      </p>
      {replay ? (
        <>
          <p className="mt-1 hidden sm:block">
            <ReplayStory description={info.description} />
          </p>
          {/* On a phone the story of the replay waits behind one line, so the charts come first. */}
          <details className="mt-1 sm:hidden">
            <summary className="cursor-pointer select-none">What is this replay?</summary>
            <p className="mt-1">
              <ReplayStory description={info.description} />
            </p>
          </details>
        </>
      ) : (
        info.description && <p className="mt-1">{info.description}</p>
      )}
      {missing && (
        <p role="alert" className="mt-1 font-semibold" data-testid="snapshot-missing-view">
          This snapshot was taken on another page ({info.views.join(", ")}), so it holds no data for this one.
        </p>
      )}
    </section>
  );
}

function ReplayStory({ description }: { description?: string }) {
  return (
    <>
      {description} To watch your own cluster instead, start Churnscope with{" "}
      <code className="break-all rounded bg-[var(--panel)] px-1 font-mono text-xs">PROMETHEUS_URL=http://prometheus.monitoring:9090 npm start</code>{" "}
      (docs/deploy.md in the repository explains credentials and API-server roles).
    </>
  );
}
