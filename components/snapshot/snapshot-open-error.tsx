import { NotConfigured } from "@/components/setup/not-configured";

/** A snapshot link that cannot be opened, or a missing replay: say so, never a blank page. */
export function SnapshotOpenError({ replay, message, configSource }: { replay: boolean; message: string; configSource: string }) {
  if (replay) return <NotConfigured configSource={configSource} problem={`The replay could not be opened: ${message}`} />;
  return (
    <main className="mx-auto max-w-3xl p-6">
      <p role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]" data-testid="snapshot-open-error">
        The snapshot could not be opened: {message}
      </p>
    </main>
  );
}
