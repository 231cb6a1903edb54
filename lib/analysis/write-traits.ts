/**
 * The condition-clock and echo report from the store's counts (per object, writer, class and traits): clock faults per
 * kind, condition type and writer with the objects they were found on, each writer's echoes, clock-only and
 * ignored-only writes, and a sentence wherever transition times cannot be trusted. Objects are told apart by their
 * store ids; only the examples shown are named (`withExampleKeys`).
 */
import type { WriteClass } from "../churn/write-class";
import { CLOCK_FAULTS, traitsOf, type ClockFinding, type WriteTraits } from "../churn/conditions";
import type { ObjectKey } from "../wire/objects";
import type { ClockRow, EchoRow, TraitsAnswer } from "../wire/traits";

/** One object's writes by one writer with one class and traits, as counted; `example` the first such write's id. */
export interface TraitCount {
  objectId: number;
  group: string;
  kind: string;
  writer: string;
  cls: WriteClass;
  traits: string;
  writes: number;
  example: number;
}

/** An example before it is named: its object's id and the write's. */
export interface ExampleRef {
  objectId: number;
  seq: number;
}

type Unnamed<T> = Omit<T, "example"> & { example: ExampleRef | null };
export type TraitsSummary = Omit<TraitsAnswer, "clocks" | "writers"> & { clocks: Unnamed<ClockRow>[]; writers: Unnamed<EchoRow>[] };

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** The example to keep: the first written. */
const first = (a: ExampleRef | null, b: ExampleRef) => (!a || b.seq < a.seq ? b : a);

export function summariseTraits(counts: readonly TraitCount[], range: { startMs: number; endMs: number }): TraitsSummary {
  type Tally<T> = Unnamed<T> & { objectSet: Set<number> };
  const clocks = new Map<string, Tally<ClockRow>>();
  const writers = new Map<string, Tally<EchoRow>>();
  // A store holds few distinct traits texts: each is read once.
  const read = new Map<string, WriteTraits>();
  const traitsIn = (text: string) => read.get(text) ?? read.set(text, traitsOf(text)).get(text)!;
  for (const c of counts) {
    const traits = traitsIn(c.traits);
    const example = { objectId: c.objectId, seq: c.example };
    for (const { finding, type } of traits.clocks?.findings ?? []) {
      if (!CLOCK_FAULTS.includes(finding)) continue;
      const id = `${c.group}\u0000${c.kind}\u0000${type}\u0000${finding}\u0000${c.writer}`;
      let row = clocks.get(id);
      if (!row) {
        row = { group: c.group, kind: c.kind, conditionType: type, finding, writer: c.writer, writes: 0, objects: 0, example: null, objectSet: new Set() };
        clocks.set(id, row);
      }
      row.writes += c.writes;
      row.objectSet.add(c.objectId);
      row.example = first(row.example, example);
    }
    const clockOnly = traits.clocks?.clockOnly === true;
    if (!traits.echo && !clockOnly && c.cls !== "no-op") continue;
    let row = writers.get(c.writer);
    if (!row) {
      row = { writer: c.writer, echoes: 0, clockOnly: 0, ignoredOnly: 0, noop: 0, objects: 0, example: null, objectSet: new Set() };
      writers.set(c.writer, row);
    }
    if (traits.echo) row.echoes += c.writes;
    else if (clockOnly) row.clockOnly += c.writes;
    else row.ignoredOnly += c.writes;
    if (c.cls === "no-op") row.noop += c.writes;
    row.objectSet.add(c.objectId);
    row.example = first(row.example, example);
  }
  const strip = <T extends { objectSet: Set<number>; objects: number }>({ objectSet, ...row }: T): Omit<T, "objectSet"> => ({
    ...row,
    objects: objectSet.size,
  });
  const clockRows = [...clocks.values()]
    .map(strip)
    .sort((a, b) => b.writes - a.writes || a.kind.localeCompare(b.kind) || a.conditionType.localeCompare(b.conditionType));
  const writerRows = [...writers.values()]
    .map(strip)
    .sort((a, b) => b.echoes + b.clockOnly + b.ignoredOnly - (a.echoes + a.clockOnly + a.ignoredOnly) || a.writer.localeCompare(b.writer));
  return { startMs: range.startMs, endMs: range.endMs, clocks: clockRows, writers: writerRows, sentences: sentencesOf(counts, traitsIn) };
}

/** The objects whose keys the examples need. */
export const exampleObjects = (summary: TraitsSummary): number[] => [
  ...new Set([...summary.clocks, ...summary.writers].flatMap((row) => (row.example ? [row.example.objectId] : []))),
];

/** The summary with each example named by its object's key (an example whose object is not known is none). */
export function withExampleKeys(summary: TraitsSummary, keys: ReadonlyMap<number, ObjectKey>): TraitsAnswer {
  const named = <T extends { example: ExampleRef | null }>(row: T) => {
    const key = row.example && keys.get(row.example.objectId);
    return { ...row, example: key && row.example ? { key, seq: row.example.seq } : null };
  };
  return { ...summary, clocks: summary.clocks.map(named), writers: summary.writers.map(named) };
}

/** Per kind and condition type: how often each finding was seen, on how many objects, by whom. */
function sentencesOf(counts: readonly TraitCount[], traitsIn: (text: string) => WriteTraits): string[] {
  type Tally = { writes: number; objects: Set<number>; writers: Set<string> };
  const byCondition = new Map<string, { kind: string; type: string; findings: Map<ClockFinding, Tally> }>();
  for (const c of counts)
    for (const { finding, type } of traitsIn(c.traits).clocks?.findings ?? []) {
      const id = `${c.group}/${c.kind}/${type}`;
      const entry = byCondition.get(id) ?? byCondition.set(id, { kind: c.kind, type, findings: new Map() }).get(id)!;
      const tally = entry.findings.get(finding) ?? entry.findings.set(finding, { writes: 0, objects: new Set(), writers: new Set() }).get(finding)!;
      tally.writes += c.writes;
      tally.objects.add(c.objectId);
      tally.writers.add(c.writer);
    }
  const out: { weight: number; text: string }[] = [];
  const names = (writers: Set<string>) => `${[...writers].sort().slice(0, 3).join(", ")}${writers.size > 3 ? ` and ${writers.size - 3} more` : ""}`;
  for (const { kind, type, findings } of byCondition.values()) {
    const frozen = findings.get("frozen");
    const moved = findings.get("moved")?.writes ?? 0;
    if (frozen) {
      const changed = frozen.writes + moved;
      const clock =
        moved === 0
          ? "its lastTransitionTime never moved: transition times cannot be used to rule out flapping"
          : `its lastTransitionTime moved on only ${plural(moved, "of them", "of them")}: transition times understate how often it flapped`;
      out.push({
        weight: frozen.writes,
        text: `${type} changed ${plural(changed, "time")} on ${plural(frozen.objects.size, kind)} by ${names(frozen.writers)}; ${clock}.`,
      });
    }
    const restamped = findings.get("restamped");
    if (restamped)
      out.push({
        weight: restamped.writes,
        text: `${type}'s lastTransitionTime moved ${plural(restamped.writes, "time")} on ${plural(restamped.objects.size, kind)} while its status stayed (${names(restamped.writers)}): transition times say ${type} changed when it did not.`,
      });
    const predates = findings.get("predates");
    if (predates)
      out.push({
        weight: predates.writes,
        text: `${type} was written with a lastTransitionTime older than its object on ${plural(predates.objects.size, kind)} (${names(predates.writers)}): a default such as 1970-01-01 left in place says nothing of when it changed.`,
      });
  }
  return out.sort((a, b) => b.weight - a.weight).map((s) => s.text);
}
