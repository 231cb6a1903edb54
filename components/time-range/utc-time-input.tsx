"use client";
/**
 * A UTC time typed as every page prints it ("2026-09-11 13:12Z"), or RFC 3339, epoch ms or now-30m: never the
 * browser's local date-time field, whose format (a US 12-hour clock, say) and zone differ from the screen's.
 * The time applies on Enter or when the field is left; a time it cannot read is said beside it.
 */
import { useEffect, useState } from "react";
import { formatUtc } from "@/lib/format/time";
import { parseTimeExpr, resolveTimeExpr } from "@/lib/time/range";

export function UtcTimeInput({
  valueMs,
  onChange,
  label,
  placeholder = "YYYY-MM-DD HH:MMZ",
  testId,
}: {
  valueMs: number | undefined;
  onChange: (ms: number | null) => void;
  /** what the time is, for screen readers */
  label: string;
  placeholder?: string;
  testId?: string;
}) {
  // Seconds only where the time has them, so what is shown is the time itself.
  const shown = valueMs === undefined ? "" : formatUtc(valueMs, valueMs % 60_000 !== 0);
  const [draft, setDraft] = useState(shown);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setDraft(shown), [shown]);
  const apply = () => {
    const text = draft.trim();
    if (text === shown) return setError(null);
    if (text === "") {
      setError(null);
      return onChange(null);
    }
    const parsed = parseTimeExpr(text);
    if (!parsed.ok) return setError(parsed.error);
    setError(null);
    onChange(resolveTimeExpr(parsed.value, Date.now()));
  };
  return (
    <span className="inline-flex flex-wrap items-center gap-1">
      <input
        data-testid={testId}
        aria-label={label}
        aria-invalid={error !== null}
        value={draft}
        placeholder={placeholder}
        size={19}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={apply}
        onKeyDown={(e) => {
          if (e.key === "Enter") apply();
        }}
        className="rounded border border-[var(--border)] bg-transparent px-1 py-0.5 font-mono"
      />
      {error && (
        <span role="alert" className="text-[var(--err-fg)]">
          {error}
        </span>
      )}
    </span>
  );
}
