import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { NoteStore, noteMarker } from "@/lib/store/notes";
import { MAX_QUERY_MARKERS, markersFromSeries } from "@/lib/markers/query-markers";

const query = { name: "NSO", expr: "nso_build_info", label: "version", detail: "operator release" };

describe("markers from a PromQL expression", () => {
  it("mark where a series appears, not where one was already present", () => {
    const { markers } = markersFromSeries(query, [
      {
        labels: { version: "v0.26.4" },
        points: [
          [0, 1],
          [60, 1],
          [120, null],
          [180, null],
        ],
      },
      {
        labels: { version: "v0.26.5" },
        points: [
          [0, null],
          [60, null],
          [120, 1],
          [180, 1],
        ],
      },
    ]);
    expect(markers).toEqual([
      { timeMs: 120, label: "NSO v0.26.5", detail: 'operator release\nfirst point of {version="v0.26.5"}\nfrom nso_build_info', kind: "query" },
    ]);
  });

  it("mark every reappearance (a rollback shows up again) and name by all labels without `label`", () => {
    const { markers } = markersFromSeries({ ...query, label: undefined, detail: "" }, [
      {
        labels: { job: "nso", version: "v1" },
        points: [
          [0, null],
          [60, 1],
          [120, null],
          [180, 1],
        ],
      },
    ]);
    expect(markers.map((m) => [m.timeMs, m.label])).toEqual([
      [60, 'NSO job="nso", version="v1"'],
      [180, 'NSO job="nso", version="v1"'],
    ]);
  });

  it("keep at most the first markers of a flapping expression and say so", () => {
    const points: [number, number | null][] = Array.from({ length: 400 }, (_, i) => [i * 60, i % 2 ? 1 : null]);
    const found = markersFromSeries(query, [{ labels: { version: "x" }, points }]);
    expect(found.truncated).toBe(true);
    expect(found.markers).toHaveLength(MAX_QUERY_MARKERS);
    expect(found.markers[0].timeMs).toBe(60);
  });
});

describe("notes", () => {
  const store = () => new NoteStore(join(mkdtempSync(join(tmpdir(), "notes-")), "notes.sqlite"));
  const at = Date.parse("2026-09-11T14:50:00Z");

  it("are kept with time, text and author, listed by range, and deleted by id", () => {
    const notes = store();
    const first = notes.add({ timeMs: at, text: "  rolled back infra v0.83.42  " }, "alice", { live: true }, at + 5_000);
    notes.add({ timeMs: at + 3_600_000, text: "paged network team" }, "bob");
    expect(first).toEqual({ id: first.id, timeMs: at, text: "rolled back infra v0.83.42", author: "alice", createdMs: at + 5_000 });
    expect(notes.between(at - 1, at + 1).map((n) => n.text)).toEqual(["rolled back infra v0.83.42"]);
    expect(notes.between(at, at + 3_600_000).map((n) => n.author)).toEqual(["alice", "bob"]);
    expect(noteMarker(first)).toEqual({
      timeMs: at,
      label: "rolled back infra v0.83.42",
      detail: "rolled back infra v0.83.42\n— alice, added 2026-09-11T14:50Z",
      kind: "note",
      id: first.id,
    });
    notes.remove(first.id);
    expect(notes.between(0, at + 3_600_000)).toHaveLength(1);
    expect(() => notes.remove(first.id)).toThrow(/no note/);
    notes.close();
  });

  it("belong to the live views or to one snapshot, and a store from before snapshot notes keeps its notes as live ones", () => {
    const dir = mkdtempSync(join(tmpdir(), "notes-"));
    const path = join(dir, "notes.sqlite");
    // A notes table as earlier versions made it, with one note.
    const old = new Database(path);
    old.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, text TEXT NOT NULL, author TEXT NOT NULL, created_ms INTEGER NOT NULL)");
    old.prepare("INSERT INTO notes (time_ms, text, author, created_ms) VALUES (?, ?, ?, ?)").run(at, "from before", "carol", at);
    old.close();
    const notes = new NoteStore(path);
    notes.add({ timeMs: at + 60_000, text: "on the replay" }, "alice", { snapshot: "replay" });
    notes.add({ timeMs: at + 120_000, text: "on another" }, "bob", { snapshot: "0123456789abcdef" });
    const texts = (scope?: Parameters<NoteStore["between"]>[2]) => notes.between(0, 8e12, scope).map((n) => n.text);
    expect(texts()).toEqual(["from before"]);
    expect(texts({ snapshot: "replay" })).toEqual(["on the replay"]);
    expect(texts({ snapshot: "0123456789abcdef" })).toEqual(["on another"]);
    notes.close();
  });

  it("refuse bad input with a message and store nothing", () => {
    const notes = store();
    expect(() => notes.add({ timeMs: at, text: "   " }, "a")).toThrow(/note text: a note needs text/);
    expect(() => notes.add({ timeMs: 1_000, text: "x" }, "a")).toThrow(/note timeMs: expected epoch milliseconds after 2000/);
    expect(() => notes.add({ timeMs: at, text: "x".repeat(501) }, "a")).toThrow(/at most 500/);
    expect(() => notes.add({ timeMs: at, text: "x", extra: 1 }, "a")).toThrow(/note/);
    expect(() => notes.add("x", "a")).toThrow(/note body/);
    expect(notes.between(0, 8e12)).toEqual([]);
    notes.close();
  });

  it("shorten long notes on the chart and keep the whole text in the tooltip", () => {
    const marker = noteMarker({ id: 1, timeMs: at, text: "a".repeat(60), author: "anonymous", createdMs: at });
    expect(marker.label).toBe(`${"a".repeat(39)}…`);
    expect(marker.detail.startsWith("a".repeat(60))).toBe(true);
  });
});
