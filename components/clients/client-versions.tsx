/**
 * A client's user-agent versions, first seen first, each with its writes and no-ops: a fix shipped as a new version
 * reads as before/after of the same component, and each later version offers the comparison at its first write.
 */
import { formatNumber } from "@/lib/format/number";
import { formatUtc } from "@/lib/format/time";
import type { ClientRow } from "@/lib/wire/clients";

export function ClientVersions({ versions, onCompare }: { versions: ClientRow["versions"]; onCompare: (atMs: number) => void }) {
  return (
    <div className="text-[11px] text-[var(--muted)]" data-cell="versions" title="the user agent's versions, with when each was first seen">
      {versions.map((v, i) => (
        <span key={v.version} data-version={v.version}>
          {i > 0 && " · "}
          {v.version || "no version"} {formatNumber(v.writes, true)}
          {v.noop > 0 && ` (${formatNumber(v.noop, true)} no-op)`}
          {i > 0 && (
            <>
              {" from "}
              <button
                type="button"
                className="text-[var(--accent)] hover:underline"
                title="compare this client before and after this version's first write"
                onClick={() => onCompare(v.firstMs)}
              >
                {formatUtc(v.firstMs, false)}
              </button>
            </>
          )}
        </span>
      ))}
    </div>
  );
}
