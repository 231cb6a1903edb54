/** The markers and notes endpoints: validated parameters in, one lib call, one envelope out. */
import { badRequest } from "../../api/envelope";
import { readBodyLimited } from "../../api/read-body";
import { rangeParams } from "../../panels/params";
import type { ServerContext } from "../context";
import type { Marker } from "../../markers/marker";
import { changeMarkers, collectMarkers } from "./collect-markers";
import { noteMarker, type Note } from "../../store/notes";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";

const MAX_NOTE_BODY_BYTES = 16 * 1024;

export async function answerMarkers(ctx: ServerContext, params: Record<string, string>, signal?: AbortSignal): Promise<{ data: Marker[]; warnings: string[] }> {
  const { startMs, endMs } = rangeParams(params.from || DEFAULT_FROM, params.to || DEFAULT_TO, Date.now(), ctx.config.limits.maxRangeMs);
  if (params.snapshot !== undefined) {
    const snapshot = await ctx.snapshots.open(params.snapshot);
    const held = snapshot.markers.filter((m) => m.timeMs >= startMs && m.timeMs <= endMs);
    const notes = (await ctx.notesStore.get().between(startMs, endMs, { snapshot: params.snapshot })).map(noteMarker);
    // The changes its object writes record, unless it froze them as markers when it was taken.
    const recorded =
      snapshot.objectWriteCount !== null && !snapshot.markers.some((m) => m.kind === "change")
        ? await changeMarkers(await ctx.stores.snapshotStore(params.snapshot), { startMs, endMs })
        : { markers: [], warnings: [] };
    return { data: [...held, ...recorded.markers, ...notes].sort((a, b) => a.timeMs - b.timeMs), warnings: recorded.warnings };
  }
  const { markers, warnings } = await collectMarkers(ctx, { startMs, endMs }, signal);
  return { data: markers, warnings };
}

/**
 * `user` is whoever the API admitted: the auth proxy's user header, or the basic-auth user; else the note is anonymous.
 * With `snapshot`, the note is on that snapshot (which must be one this dashboard holds), not on the live views.
 */
export async function addNote(
  ctx: ServerContext,
  body: ReadableStream<Uint8Array> | null,
  user: string | undefined,
  snapshot?: string,
): Promise<{ data: Note & { marker: Marker } }> {
  if (snapshot !== undefined) await ctx.snapshots.open(snapshot);
  const bytes = await readBodyLimited(body, MAX_NOTE_BODY_BYTES, "16 KiB for a note");
  let input: unknown;
  try {
    input = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw badRequest('the body is not JSON: send {"timeMs": <epoch ms>, "text": "…"}');
  }
  const note = await ctx.notesStore.get().add(input, user || "anonymous", snapshot === undefined ? { live: true } : { snapshot });
  return { data: { ...note, marker: noteMarker(note) } };
}

export async function deleteNote(ctx: ServerContext, idText: string): Promise<{ data: { deleted: number } }> {
  if (!/^\d{1,15}$/.test(idText)) throw badRequest(`"${idText.slice(0, 20)}" is not a note id`);
  await ctx.notesStore.get().remove(Number(idText));
  return { data: { deleted: Number(idText) } };
}
