/** What the Clients table's no-op and changed counts rest on, kind by kind, and how many writes neither is known of. */
import { formatNumber } from "@/lib/format/number";
import { NOOP_EVIDENCE_TEXT } from "@/lib/churn/preconditions";
import type { ClientsAnswer } from "@/lib/wire/clients";

const NOT_KEPT = "the logged bodies or the API server's answer (which of the two was not recorded: a snapshot or a store from before Churnscope kept it)";

export function NoopEvidence({ evidence, unknown }: Pick<ClientsAnswer, "evidence" | "unknown">) {
  if (evidence.length === 0 && unknown === 0) return null;
  return (
    <div data-testid="noop-evidence" className="mt-2 text-[11px] text-[var(--muted)]">
      <div className="font-medium">No-op and changed rest on:</div>
      <ul className="ml-4 list-disc">
        {evidence.map((e) => (
          <li key={e.evidence} data-evidence={e.evidence}>
            {e.noop > 0 && <span className="font-mono">{formatNumber(e.noop, true)} no-op</span>}
            {e.noop > 0 && e.changed > 0 && ", "}
            {e.changed > 0 && <span className="font-mono">{formatNumber(e.changed, true)} changed</span>}:{" "}
            {e.evidence === "not kept" ? NOT_KEPT : NOOP_EVIDENCE_TEXT[e.evidence]}
          </li>
        ))}
        {unknown > 0 && (
          <li data-evidence="unknown">
            <span className="font-mono">{formatNumber(unknown, true)}</span> updates and patches not known either way: logged without bodies, and sent without a
            precondition, or not followed yet by another write of their object
          </li>
        )}
      </ul>
    </div>
  );
}
