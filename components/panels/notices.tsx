/** Prometheus warnings and infos, always shown with the panel they belong to. */
export function Notices({ warnings, infos }: { warnings: string[]; infos: string[] }) {
  if (warnings.length === 0 && infos.length === 0) return null;
  return (
    <ul className="mb-2 space-y-1 text-xs [overflow-wrap:anywhere]" data-testid="panel-notices">
      {warnings.map((w, i) => (
        <li key={`w${i}`} className="rounded bg-[var(--warn-bg)] px-2 py-1 text-[var(--warn-fg)]">
          <span className="font-semibold">Warning:</span> {w}
        </li>
      ))}
      {infos.map((info, i) => (
        <li key={`i${i}`} className="rounded border border-[var(--border)] px-2 py-1 text-[var(--muted)]">
          <span className="font-semibold">Info:</span> {info}
        </li>
      ))}
    </ul>
  );
}
