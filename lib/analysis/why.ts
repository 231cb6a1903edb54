/**
 * Why it started: the recorded changes around an onset tested against the write rate. Each change is tied to the
 * writers it concerns by what their writes carry (the service account they write as, a field manager or user agent
 * named like the workload's image), and for each tie the writer's own rate is run through the onset detector at the
 * change: did it step there, and from what to what. Each writer that rose is asked whether its workload changed at
 * all before the onset. A change no writer matches is listed as such, never guessed into a match.
 */
import type { RecordedChange } from "../churn/changes";
import { imageParts } from "../churn/changes";
import type { ObjectKey } from "../wire/objects";
import { changePoints, detectOnset } from "./onset";

export interface ChangeInput extends RecordedChange {
  key: ObjectKey;
  tsMs: number;
  /** who made the change (its write's writer) */
  writer: string;
  /** not a change but what the workload ran when first seen */
  baseline?: boolean;
}

/** One writer of the range: its name as stored (field manager or user), a user agent its writes carried, and its rate. */
export interface WriterRate {
  writer: string;
  userAgent: string;
  /** writes per second at each step's end */
  points: [number, number][];
}

export interface Match {
  writer: string;
  /** what the tie rests on, in words */
  rests: string;
}

export interface RateAtChange {
  writer: string;
  /** tied to the change (else: a writer that rose, tested because nothing ties) */
  tied: boolean;
  /** writes/s over the window before the change and after it */
  before: number;
  after: number;
  /** the detector found a step of this writer's rate at the change */
  stepped: boolean;
}

/**
 * moved: a writer tied to the change stepped at it. did not move: no writer tested stepped (the tied ones, or where
 * nothing ties, the writers that rose). coincides: nothing ties, but a writer that rose stepped at it: listed, not named.
 */
export type Verdict = "moved" | "did not move" | "coincides";

export interface ChangeVerdict {
  change: ChangeInput;
  matches: Match[];
  rates: RateAtChange[];
  verdict: Verdict;
  /** within the look-back window before the onset */
  precededOnset: boolean;
}

export interface WriterCheck {
  writer: string;
  before: number;
  after: number;
  /** the workload matched to it, with what the tie rests on */
  workload?: { key: ObjectKey; rests: string };
  /** its workload's last change (or baseline) at the onset */
  lastChange?: { tsMs: number; summary: string; baseline: boolean };
}

export interface WhyAnswer {
  onset: { timeMs: number; before: number; after: number; detectedFrom: "given" | "recorded writes" } | null;
  changes: ChangeVerdict[];
  writers: WriterCheck[];
  sentence: string;
}

export interface WhyOptions {
  stepMs: number;
  /** the onset's time (onsetOfWriters when the caller does not know it), if there is one */
  onsetMs?: number;
  /** whether the onset was detected from the writers' rates (else the caller gave it: the chart's) */
  detected?: boolean;
  /** how long before the onset a change counts as preceding it (default 24 h) */
  lookBackMs?: number;
  /** a rate's window on either side of a change (default: 1 h, at least 8 steps) */
  windowMs?: number;
}

/** How long after a change the onset may be and still follow from it: a rollout takes minutes to replace its pods. */
const CAUSE_SLACK_MS = 10 * 60_000;

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** What ties a writer to a workload's change, or null: never a guess. */
export function matchWriter(change: Pick<ChangeInput, "key" | "subject">, writer: Pick<WriterRate, "writer" | "userAgent">): string | null {
  const account = SERVICE_ACCOUNT_USER.exec(writer.writer);
  const { serviceAccount, images } = change.subject;
  // The default account is shared by every workload in its namespace that names none: it ties nothing.
  if (account && serviceAccount !== "" && serviceAccount !== "default" && account[1] === change.key.namespace && account[2] === serviceAccount)
    return `writes as its service account ${account[1]}/${account[2]}`;
  const imageNames = new Map(images.map((image) => [imageParts(image).name, image]));
  const product = writer.userAgent.split("/")[0];
  const named = (name: string) =>
    imageNames.has(name)
      ? `its image ${imageNames.get(name)}`
      : name === change.key.name && images.length > 0
        ? `the ${change.key.kind} ${change.key.name}`
        : null;
  if (!account && writer.writer !== "" && named(writer.writer)) return `field manager "${writer.writer}" is named like ${named(writer.writer)}`;
  if (product !== "" && named(product)) return `user agent "${writer.userAgent.slice(0, 80)}" is named like ${named(product)}`;
  return null;
}

const meanOf = (points: [number, number][], fromMs: number, toMs: number) => {
  const inside = points.filter(([t]) => t >= fromMs && t < toMs);
  return inside.length === 0 ? 0 : inside.reduce((sum, [, v]) => sum + v, 0) / inside.length;
};

/** The writer's rate around a change, and whether the detector finds a step there (within two steps, or five minutes, after it). */
export function rateAtChange(rate: WriterRate, tsMs: number, stepMs: number, windowMs: number): Omit<RateAtChange, "tied"> {
  const around = rate.points.filter(([t]) => t >= tsMs - windowMs && t < tsMs + windowMs);
  const slack = Math.max(2 * stepMs, 300_000);
  const stepped = changePoints(around, { minSegment: 3 }).some((p) => p.timeMs >= tsMs - stepMs && p.timeMs <= tsMs + slack);
  return { writer: rate.writer, before: meanOf(rate.points, tsMs - windowMs, tsMs), after: meanOf(rate.points, tsMs, tsMs + windowMs), stepped };
}

const utc = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/:\d\d\.\d{3}Z$/, "Z")
    .replace("T", " ");
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const rate = (n: number) => (n >= 10 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(2));

/** The onset of the writers' summed rate, or of one writer's (detectOnset), when the caller has none. */
export function onsetOfWriters(writers: WriterRate[]): number | undefined {
  return detectOnset(writers.map((w) => ({ labels: { writer: w.writer }, points: w.points })))?.timeMs;
}

export function explainOnset(changes: ChangeInput[], writers: WriterRate[], latest: ChangeInput[], options: WhyOptions): WhyAnswer {
  const windowMs = options.windowMs ?? Math.max(3_600_000, 8 * options.stepMs);
  const lookBackMs = options.lookBackMs ?? 86_400_000;
  const onsetMs = options.onsetMs;
  const byWriter = new Map(writers.map((w) => [w.writer, w]));
  const onset =
    onsetMs === undefined
      ? null
      : {
          timeMs: onsetMs,
          before: writers.reduce((sum, w) => sum + meanOf(w.points, onsetMs - windowMs, onsetMs), 0),
          after: writers.reduce((sum, w) => sum + meanOf(w.points, onsetMs, onsetMs + windowMs), 0),
          detectedFrom: options.detected ? ("recorded writes" as const) : ("given" as const),
        };

  // The writers whose rate rose most across the onset (at most five).
  const rising =
    onsetMs === undefined
      ? []
      : writers
          .map((w) => ({ writer: w, before: meanOf(w.points, onsetMs - windowMs, onsetMs), after: meanOf(w.points, onsetMs, onsetMs + windowMs) }))
          // Rose by a fifth or more: a wobble is not a rise.
          .filter((w) => w.after > w.before * 1.2)
          .sort((a, b) => b.after - b.before - (a.after - a.before))
          .slice(0, 5);

  const verdicts = changes.map((change): ChangeVerdict => {
    const matches = writers.flatMap((w) => {
      const rests = matchWriter(change, w);
      return rests ? [{ writer: w.writer, rests }] : [];
    });
    // The writers tied to it; where none is, the writers that rose, so that every change is tested against the rate.
    const tested = matches.length > 0 ? matches.map((m) => byWriter.get(m.writer)!) : rising.map((r) => r.writer);
    const rates = tested.map((w) => ({ ...rateAtChange(w, change.tsMs, options.stepMs, windowMs), tied: matches.length > 0 }));
    const stepped = rates.some((r) => r.stepped);
    const verdict: Verdict = stepped ? (matches.length > 0 ? "moved" : "coincides") : "did not move";
    const precededOnset = onsetMs !== undefined && change.tsMs <= onsetMs && change.tsMs >= onsetMs - lookBackMs;
    return { change, matches, rates, verdict, precededOnset };
  });

  const checks = rising.map(({ writer, before, after }): WriterCheck => {
    const found = latest.flatMap((c) => {
      const rests = c.subject.images.length > 0 || c.subject.serviceAccount !== "" ? matchWriter(c, writer) : null;
      return rests ? [{ c, rests }] : [];
    })[0];
    return {
      writer: writer.writer,
      before,
      after,
      ...(found && {
        workload: { key: found.c.key, rests: found.rests },
        lastChange: { tsMs: found.c.tsMs, summary: found.c.summary, baseline: found.c.baseline ?? false },
      }),
    };
  });
  return { onset, changes: verdicts, writers: checks, sentence: sentenceOf(onset, verdicts, checks, lookBackMs) };
}

function sentenceOf(onset: WhyAnswer["onset"], verdicts: ChangeVerdict[], checks: WriterCheck[], lookBackMs: number): string {
  if (!onset)
    return verdicts.length === 0 ? "No onset and no recorded change in this range." : `No onset in this range; ${verdicts.length} recorded change(s) listed.`;
  const name = (v: ChangeVerdict) =>
    `${v.change.summary} (${v.change.key.kind} ${v.change.key.namespace ? `${v.change.key.namespace}/` : ""}${v.change.key.name}, ${utc(v.change.tsMs)})`;
  const parts: string[] = [];
  const preceded = verdicts.filter((v) => v.precededOnset);
  parts.push(
    preceded.length === 0
      ? `No recorded change in the ${Math.round(lookBackMs / 3_600_000)} h before the onset at ${utc(onset.timeMs)}.`
      : `Before the onset at ${utc(onset.timeMs)}: ${preceded.map(name).join("; ")}.`,
  );
  const moved = verdicts.filter((v) => v.verdict === "moved");
  const still = verdicts.filter((v) => v.verdict === "did not move");
  const coinciding = verdicts.filter((v) => v.verdict === "coincides");
  const figures = (v: ChangeVerdict) => v.rates.map((r) => `${r.writer} ${rate(r.before)} → ${rate(r.after)}`).join(", ");
  const untied = (v: ChangeVerdict) => (v.matches.length === 0 ? "; no writer ties to it" : "");
  if (moved.length > 0)
    parts.push(
      `The rate moved with ${moved
        .map((v) => {
          const r = v.rates.find((x) => x.stepped)!;
          return `${name(v)}: ${r.writer} ${rate(r.before)} → ${rate(r.after)} writes/s`;
        })
        .join("; ")}.`,
    );
  if (still.length > 0)
    parts.push(
      `The rate did not move with ${still.map((v) => `${name(v)} (${figures(v) || "no writer rose"}${untied(v)})`).join("; ")}.`,
    );
  if (coinciding.length > 0)
    parts.push(`The rate stepped at ${coinciding.map((v) => `${name(v)} (${figures(v)})`).join("; ")} too, but no writer ties to it: listed, not named.`);
  for (const check of checks) {
    if (check.lastChange && check.lastChange.tsMs <= 0) parts.push(`${check.writer}: no recorded change.`);
    else if (!check.lastChange) parts.push(`${check.writer} (rose ${rate(check.before)} → ${rate(check.after)} writes/s): no recorded workload matches it.`);
    else if (check.lastChange.tsMs < onset.timeMs - lookBackMs || check.lastChange.baseline)
      parts.push(`${check.writer}: no change since ${day(check.lastChange.tsMs)}.`);
    else parts.push(`${check.writer}: ${check.lastChange.summary} at ${utc(check.lastChange.tsMs)}.`);
  }
  // A cause steps its writer's rate up, and comes before the onset (or with it, within the detector's slack).
  const causes = moved.filter((v) => v.change.tsMs <= onset.timeMs + CAUSE_SLACK_MS && v.rates.some((r) => r.stepped && r.after > r.before));
  parts.push(
    causes.length === 0
      ? "Not a release: the rate rose with none of the recorded changes."
      : `The onset follows ${causes.map((v) => `${v.change.summary} (${v.change.key.name})`).join(" and ")}.`,
  );
  return parts.join(" ");
}
