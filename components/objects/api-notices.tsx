/** A JSON API answer's failure, warnings and infos, shown above the view that asked. */
import { Notices } from "@/components/panels/notices";

export function ApiNotices({ error, answer }: { error: Error | null; answer?: { warnings: string[]; infos: string[] } }) {
  return (
    <>
      {error && (
        <p role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]">
          {error.message}
        </p>
      )}
      {answer && <Notices warnings={answer.warnings} infos={answer.infos} />}
    </>
  );
}
