"use client";
/** Asks again, at once: offered wherever an answer failed, so nobody has to reload the page. */
export function RetryButton({ onRetry, busy = false }: { onRetry: () => unknown; busy?: boolean }) {
  return (
    <button
      type="button"
      data-testid="retry"
      disabled={busy}
      onClick={() => void onRetry()}
      className="ml-1 rounded border border-current px-1.5 text-xs font-semibold disabled:opacity-50"
    >
      {busy ? "Retrying…" : "Retry"}
    </button>
  );
}
