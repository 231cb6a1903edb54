import { NotConfigured } from "@/components/setup/not-configured";
import type { KeptBundle } from "@/lib/snapshot/format/schema";
import { formatUtc } from "@/lib/format/time";

/**
 * A snapshot link that cannot be opened, or a missing replay: say so, never a blank page. A link to a snapshot this
 * dashboard does not hold (another installation's, or a mistyped id) offers the ones it holds, on the same page.
 */
export function SnapshotOpenError({
  replay,
  message,
  configSource,
  offers = [],
}: {
  replay: boolean;
  message: string;
  configSource: string;
  offers?: KeptBundle[];
}) {
  if (replay) return <NotConfigured configSource={configSource} problem={`The replay could not be opened: ${message}`} />;
  return (
    <main className="mx-auto max-w-3xl space-y-3 p-6">
      <p role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]" data-testid="snapshot-open-error">
        The snapshot could not be opened: {message}
      </p>
      <nav aria-label="snapshots this dashboard holds" className="text-sm" data-testid="snapshot-offers">
        <p className="mb-1">Open one this dashboard holds instead, or open the snapshot file itself from any page&apos;s toolbar:</p>
        <ul className="ml-5 list-disc space-y-0.5">
          <li>
            <a className="text-[var(--accent)] hover:underline" href="?snapshot=replay">
              the Connector churn replay
            </a>
          </li>
          {offers.map((o) => (
            <li key={o.id}>
              <a className="font-mono text-[var(--accent)] hover:underline" href={`?snapshot=${o.id}`}>
                {o.id}
              </a>{" "}
              <span className="text-[var(--muted)]">kept {formatUtc(o.storedMs, false)}</span>
            </li>
          ))}
        </ul>
      </nav>
    </main>
  );
}
