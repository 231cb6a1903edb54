/**
 * The condition-clock and echo report from the store's counts (per object, writer, class and traits): clock faults per
 * kind, condition type and writer with the objects they were found on, each writer's echoes, clock-only and
 * ignored-only writes, and a sentence wherever transition times cannot be trusted.
 */
import type { WriteClass } from "../churn/analyze";
import { CLOCK_FAULTS, traitsOf, type ClockFinding } from "../churn/conditions";
import type { ObjectKey } from "../wire/objects";
import type { ClockRow, EchoRow, ExampleWrite, TraitsAnswer } from "../wire/traits";

/** One object's writes by one writer with one class and traits, as counted. */
export interface TraitCount {
  key: ObjectKey;
  writer: string;
  cls: WriteClass;
  traits: string;
  writes: number;
  example: ExampleWrite | null;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** The example to keep: the earliest. */
const earlier = (a: ExampleWrite | null, b: ExampleWrite | null) => (!a ? b : !b ? a : b.tsMs < a.tsMs || (b.tsMs === a.tsMs && b.seq < a.seq) ? b : a);

export function summariseTraits(counts: readonly TraitCount[], range: { startMs: number; endMs: number }): TraitsAnswer {
  const clocks = new Map<string, ClockRow & { objectSet: Set<string> }>();
  const writers = new Map<string, EchoRow & { objectSet: Set<string> }>();
  for (const c of counts) {
    const traits = traitsOf(c.traits);
    const objectText = `${c.key.cluster}/${c.key.group}/${c.key.kind}/${c.key.namespace}/${c.key.name}`;
    for (const { finding, type } of traits.clocks?.findings ?? []) {
      if (!CLOCK_FAULTS.includes(finding)) continue;
      const id = JSON.stringify([c.key.group, c.key.kind, type, finding, c.writer]);
      const row = clocks.get(id) ?? {
        group: c.key.group,
        kind: c.key.kind,
        conditionType: type,
        finding,
        writer: c.writer,
        writes: 0,
        objects: 0,
        example: null,
        objectSet: new Set<string>(),
      };
      row.writes += c.writes;
      row.objectSet.add(objectText);
      row.example = earlier(row.example, c.example);
      clocks.set(id, row);
    }
    const clockOnly = traits.clocks?.clockOnly === true;
    if (!traits.echo && !clockOnly && c.cls !== "no-op") continue;
    const row = writers.get(c.writer) ?? {
      writer: c.writer,
      echoes: 0,
      clockOnly: 0,
      ignoredOnly: 0,
      noop: 0,
      objects: 0,
      example: null,
      objectSet: new Set<string>(),
    };
    if (traits.echo) row.echoes += c.writes;
    else if (clockOnly) row.clockOnly += c.writes;
    else row.ignoredOnly += c.writes;
    if (c.cls === "no-op") row.noop += c.writes;
    row.objectSet.add(objectText);
    row.example = earlier(row.example, c.example);
    writers.set(c.writer, row);
  }
  const strip = <T extends { objectSet: Set<string>; objects: number }>({ objectSet, ...row }: T): Omit<T, "objectSet"> => ({
    ...row,
    objects: objectSet.size,
  });
  const clockRows = [...clocks.values()]
    .map(strip)
    .sort((a, b) => b.writes - a.writes || a.kind.localeCompare(b.kind) || a.conditionType.localeCompare(b.conditionType));
  const writerRows = [...writers.values()]
    .map(strip)
    .sort((a, b) => b.echoes + b.clockOnly + b.ignoredOnly - (a.echoes + a.clockOnly + a.ignoredOnly) || a.writer.localeCompare(b.writer));
  return { startMs: range.startMs, endMs: range.endMs, clocks: clockRows, writers: writerRows, sentences: sentencesOf(counts) };
}

/** Per kind and condition type: how often each finding was seen, on how many objects, by whom. */
function sentencesOf(counts: readonly TraitCount[]): string[] {
  type Tally = { writes: number; objects: Set<string>; writers: Set<string> };
  const byCondition = new Map<string, { kind: string; type: string; findings: Map<ClockFinding, Tally> }>();
  for (const c of counts)
    for (const { finding, type } of traitsOf(c.traits).clocks?.findings ?? []) {
      const id = `${c.key.group}/${c.key.kind}/${type}`;
      const entry = byCondition.get(id) ?? byCondition.set(id, { kind: c.key.kind, type, findings: new Map() }).get(id)!;
      const tally = entry.findings.get(finding) ?? entry.findings.set(finding, { writes: 0, objects: new Set(), writers: new Set() }).get(finding)!;
      tally.writes += c.writes;
      tally.objects.add(`${c.key.cluster}/${c.key.namespace}/${c.key.name}`);
      tally.writers.add(c.writer);
    }
  const out: { weight: number; text: string }[] = [];
  const by = (writers: Set<string>) => `by ${[...writers].sort().slice(0, 3).join(", ")}${writers.size > 3 ? ` and ${writers.size - 3} more` : ""}`;
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
        text: `${type} changed ${plural(changed, "time")} on ${plural(frozen.objects.size, kind)} ${by(frozen.writers)}; ${clock}.`,
      });
    }
    const restamped = findings.get("restamped");
    if (restamped)
      out.push({
        weight: restamped.writes,
        text: `${type}'s lastTransitionTime moved ${plural(restamped.writes, "time")} on ${plural(restamped.objects.size, kind)} while its status stayed (${by(restamped.writers).slice(3)}): transition times say ${type} changed when it did not.`,
      });
    const predates = findings.get("predates");
    if (predates)
      out.push({
        weight: predates.writes,
        text: `${type} was written with a lastTransitionTime older than its object on ${plural(predates.objects.size, kind)} (${by(predates.writers).slice(3)}): a default such as 1970-01-01 left in place says nothing of when it changed.`,
      });
  }
  return out.sort((a, b) => b.weight - a.weight).map((s) => s.text);
}
