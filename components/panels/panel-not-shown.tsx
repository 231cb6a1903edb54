/** A panel with nothing to draw here, as one line at the end of its grid: its title, and why. */
export function PanelNotShown({ id, title, reasons }: { id: string; title: string; reasons: string[] }) {
  return (
    <p data-testid="panel-not-shown" data-panel={id} className="order-last text-xs text-[var(--muted)] [overflow-wrap:anywhere] lg:col-span-2">
      <span className="font-semibold">{title}</span>: {reasons.join(" ")}
    </p>
  );
}
