/** A JSON API answer's failure, warnings and infos, shown above the view that asked; and the wait for one. */
import { Notices } from "@/components/panels/notices";
import { RetryButton } from "@/components/panels/retry-button";

export function ApiNotices({
  error,
  answer,
  retry,
}: {
  error: Error | null;
  answer?: { warnings: string[]; infos: string[] };
  /** asks again (React Query's refetch), offered beside a failure so nobody has to reload the page */
  retry?: () => unknown;
}) {
  return (
    <>
      {error && (
        <p role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]">
          {error.message}
          {retry && <RetryButton onRetry={retry} />}
        </p>
      )}
      {answer && <Notices warnings={answer.warnings} infos={answer.infos} />}
    </>
  );
}

/** Said while a store answer loads, so an empty table is never mistaken for "nothing changed". */
export function StoreLoading({ snapshot }: { snapshot: boolean }) {
  return (
    <p role="status" data-testid="store-loading" className="py-6 text-center text-sm text-[var(--muted)]">
      {snapshot ? "Loading: the first visit to a snapshot builds its object store, which takes a few seconds…" : "Loading…"}
    </p>
  );
}
