"use client";
/**
 * "Notes": add a note at a time (it becomes a marker on every chart, for everyone), see and delete
 * the notes in this range, and see which marker queries failed. On a snapshot (the replay included)
 * a note is that snapshot's: drawn on its charts here, and packed into it when it is downloaded.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { fetchEnvelope } from "@/lib/api/fetch-envelope";
import { formatUtc } from "@/lib/format/time";
import { useMarkers } from "@/lib/query/hooks";
import type { Marker } from "@/lib/markers/marker";
import { parseTimeExpr, resolveTimeExpr } from "@/lib/time/range";

// The minute, as every page prints times (and as the field reads them back).
const minute = (ms: number) => formatUtc(Math.floor(ms / 60_000) * 60_000, false);

export function NotesControl({ startMs, endMs, snapshot }: { startMs: number; endMs: number; snapshot?: string }) {
  const [open, setOpen] = useState(false);
  const [time, setTime] = useState("");
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const queryClient = useQueryClient();
  const markers = useMarkers(startMs, endMs, snapshot);
  const notes = (markers.data?.data ?? []).filter((m) => m.kind === "note");
  const warnings = markers.data?.warnings ?? [];
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["markers"] });
  // Live, now (or the range's end); on a snapshot, whose "now" is long past, the middle of what is on screen.
  const defaultMs = snapshot ? Math.round((startMs + endMs) / 2) : Math.min(endMs, Date.now());

  const save = async () => {
    const parsed = parseTimeExpr(time.trim() || minute(defaultMs));
    if (!parsed.ok) return setError(parsed.error);
    try {
      await fetchEnvelope(snapshot ? `/api/notes?snapshot=${encodeURIComponent(snapshot)}` : "/api/notes", undefined, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ timeMs: resolveTimeExpr(parsed.value, Date.now()), text }),
      });
      setText("");
      setError(null);
      await refresh();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <span className="relative text-sm">
      <button
        type="button"
        data-testid="notes-button"
        className="rounded border border-[var(--border)] px-2 py-1 hover:bg-[var(--bg)]"
        title={
          warnings.length
            ? `Some markers are missing:\n${warnings.join("\n")}`
            : snapshot
              ? "Add a note to this snapshot: a marker on its charts, kept by this dashboard and packed into the snapshot when it is downloaded"
              : "Add a note that shows as a marker on every chart"
        }
        onClick={() => setOpen(!open)}
      >
        Notes{notes.length ? ` (${notes.length})` : ""}
        {warnings.length > 0 && <span className="ml-1 text-[var(--warn-fg)]">⚠</span>}
      </button>
      {open && (
        <div
          className="absolute right-0 top-9 z-20 w-[26rem] space-y-2 rounded border border-[var(--border)] bg-[var(--panel)] p-3 shadow"
          data-testid="notes-popover"
        >
          {warnings.map((w) => (
            <p key={w} role="alert" className="rounded bg-[var(--warn-bg)] px-2 py-1 text-xs text-[var(--warn-fg)]">
              {w}
            </p>
          ))}
          <label className="block text-xs text-[var(--muted)]">
            Time (UTC, such as 2026-09-11 13:12Z, or now-30m)
            <input
              data-testid="note-time"
              className="mt-0.5 block w-full rounded border border-[var(--border)] bg-[var(--bg)] px-2 py-1 font-mono text-xs text-[var(--fg)]"
              placeholder={minute(defaultMs)}
              value={time}
              onChange={(e) => setTime(e.target.value)}
            />
          </label>
          <label className="block text-xs text-[var(--muted)]">
            Note
            <textarea
              data-testid="note-text"
              maxLength={500}
              rows={2}
              className="mt-0.5 block w-full rounded border border-[var(--border)] bg-[var(--bg)] px-2 py-1 text-sm text-[var(--fg)]"
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
          </label>
          {error && (
            <p role="alert" className="text-xs text-[var(--err-fg)]">
              {error}
            </p>
          )}
          <div className="flex justify-end gap-2">
            <button type="button" className="text-xs text-[var(--muted)]" onClick={() => setOpen(false)}>
              Close
            </button>
            <button
              type="button"
              data-testid="note-save"
              disabled={!text.trim()}
              className="rounded bg-[var(--accent)] px-2 py-1 text-xs text-white disabled:opacity-50"
              onClick={() => void save()}
            >
              Add note
            </button>
          </div>
          {notes.length > 0 && (
            <ul className="max-h-48 space-y-1 overflow-auto border-t border-[var(--border)] pt-2 text-xs" data-testid="notes-list">
              {notes.map((n) => (
                <NoteItem key={`${n.id ?? "packed"}-${n.timeMs}-${n.label}`} note={n} onDeleted={refresh} onError={setError} />
              ))}
            </ul>
          )}
        </div>
      )}
    </span>
  );
}

/**
 * One note in the list. A note is everyone's, so deleting it asks first; a note packed inside a snapshot file (it has
 * no id here) is part of that file and cannot be deleted, which the row says instead of offering a delete that fails.
 */
function NoteItem({ note, onDeleted, onError }: { note: Marker; onDeleted: () => void; onError: (message: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const remove = (id: number) =>
    void fetchEnvelope(`/api/notes/${id}`, undefined, { method: "DELETE" }).then(onDeleted, (e: Error) => {
      setConfirming(false);
      onError(e.message);
    });
  return (
    <li className="flex items-start gap-2" data-testid="note-item">
      <span className="font-mono text-[var(--muted)]">{formatUtc(note.timeMs, false)}</span>
      <span className="flex-1 whitespace-pre-wrap break-words" title={note.detail}>
        {note.detail}
      </span>
      {note.id === undefined ? (
        <span
          className="text-[var(--muted)]"
          title="This note was packed into the snapshot file when it was taken: it is part of the file and cannot be deleted here"
        >
          in the file
        </span>
      ) : confirming ? (
        <span className="flex gap-1" role="group" aria-label="confirm deleting this note">
          <span>Delete for everyone?</span>
          <button type="button" data-testid="note-delete-confirm" className="text-[var(--err-fg)] underline" onClick={() => remove(note.id!)}>
            Delete
          </button>
          <button type="button" className="underline" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </span>
      ) : (
        <button
          type="button"
          aria-label={`delete note ${note.label}`}
          className="text-[var(--muted)] hover:text-[var(--err-fg)]"
          onClick={() => setConfirming(true)}
        >
          ✕
        </button>
      )}
    </li>
  );
}
