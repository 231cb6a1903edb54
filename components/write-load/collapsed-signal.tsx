"use client";
/** A signal panel on a phone before it is opened: one line with its title, and nothing asked of the server until tapped. */
import type { PanelDef } from "@/lib/panels/queries";

export function CollapsedSignal({ def, onOpen }: { def: PanelDef; onOpen: () => void }) {
  return (
    <button
      type="button"
      data-collapsed-signal={def.id}
      aria-expanded={false}
      onClick={onOpen}
      className="flex w-full items-baseline gap-2 rounded-md border border-[var(--border)] bg-[var(--panel)] px-3 py-2 text-left"
    >
      <span className="text-sm font-semibold">{def.title}</span>
      <span className="text-xs text-[var(--muted)]">{def.unit}</span>
      <span className="ml-auto whitespace-nowrap text-xs text-[var(--accent)]" aria-hidden="true">
        show ▸
      </span>
    </button>
  );
}
