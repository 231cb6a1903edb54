/** Notes on both store engines, one suite: a SQLite file of their own, and a real PostgreSQL server's database. */
import { describe, expect, it } from "vitest";
import { noteMarker, NoteStore } from "@/lib/store/notes";
import { storeEngines } from "../helpers/store-engines";

const at = Date.parse("2026-09-11T14:50:00Z");

describe.each(storeEngines())("notes on %s", (_name, store) => {
  it("are kept with time, text and author, listed by range, and deleted by id", async () => {
    const notes = await store.notes();
    const first = await notes.add({ timeMs: at, text: "  rolled back infra v0.83.42  " }, "alice", { live: true }, at + 5_000);
    const second = await notes.add({ timeMs: at + 3_600_000, text: "paged network team" }, "bob");
    expect(first).toEqual({ id: first.id, timeMs: at, text: "rolled back infra v0.83.42", author: "alice", createdMs: at + 5_000 });
    expect(second.id).not.toBe(first.id);
    expect((await notes.between(at - 1, at + 1)).map((n) => n.text)).toEqual(["rolled back infra v0.83.42"]);
    expect(await notes.between(at, at + 3_600_000)).toEqual([first, second]);
    expect(noteMarker(first)).toEqual({
      timeMs: at,
      label: "rolled back infra v0.83.42",
      detail: "rolled back infra v0.83.42\n— alice, added 2026-09-11 14:50Z",
      kind: "note",
      id: first.id,
    });
    await notes.remove(first.id);
    expect(await notes.between(0, at + 3_600_000)).toEqual([second]);
    await expect(notes.remove(first.id)).rejects.toThrow(/no note/);
    await notes.close();
  });

  it("belong to the live views or to one snapshot", async () => {
    const notes = await store.notes();
    await notes.add({ timeMs: at, text: "live" }, "carol");
    await notes.add({ timeMs: at + 60_000, text: "on the replay" }, "alice", { snapshot: "replay" });
    await notes.add({ timeMs: at + 120_000, text: "on another" }, "bob", { snapshot: "0123456789abcdef" });
    const texts = async (scope?: Parameters<NoteStore["between"]>[2]) => (await notes.between(0, 8e12, scope)).map((n) => n.text);
    expect(await texts()).toEqual(["live"]);
    expect(await texts({ snapshot: "replay" })).toEqual(["on the replay"]);
    expect(await texts({ snapshot: "0123456789abcdef" })).toEqual(["on another"]);
    await notes.close();
  });

  it("refuse bad input with a message and store nothing", async () => {
    const notes = await store.notes();
    await expect(notes.add({ timeMs: at, text: "   " }, "a")).rejects.toThrow(/note text: a note needs text/);
    await expect(notes.add({ timeMs: 1_000, text: "x" }, "a")).rejects.toThrow(/note timeMs: expected epoch milliseconds after 2000/);
    await expect(notes.add({ timeMs: at, text: "x".repeat(501) }, "a")).rejects.toThrow(/at most 500/);
    await expect(notes.add({ timeMs: at, text: "x", extra: 1 }, "a")).rejects.toThrow(/note/);
    await expect(notes.add("x", "a")).rejects.toThrow(/note body/);
    expect(await notes.between(0, 8e12)).toEqual([]);
    await notes.close();
  });

  it("keep a text of any characters as it was typed", async () => {
    const notes = await store.notes();
    const text = `rollback ? $1 '; DROP TABLE notes; -- "quoted" ✓ ${"ü".repeat(10)}`;
    const note = await notes.add({ timeMs: at, text }, "o'brien");
    expect(await notes.between(at, at)).toEqual([{ ...note, text, author: "o'brien" }]);
    await notes.close();
  });
});
