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
import { formatUtc } from "../format/time";
import { objectLabel } from "../objects/key";
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
  /** what the test found, in words */
  said: string;
}

export interface WriterCheck {
  writer: string;
  before: number;
  after: number;
  /** the workload matched to it, with what the tie rests on */
  workload?: { key: ObjectKey; rests: string };
  /** its workload's last change (or baseline) at the onset */
  lastChange?: { tsMs: number; summary: string; baseline: boolean };
  /** the same in a sentence */
  said: string;
}

export interface WhyAnswer {
  onset: { timeMs: number; before: number; after: number; detectedFrom: "given" | "recorded writes" } | null;
  changes: ChangeVerdict[];
  writers: WriterCheck[];
  /** the answer in one line: what the onset follows, or "Not a release" */
  conclusion: string;
  /** everything above in sentences */
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

const utc = (ms: number) => formatUtc(ms, false);
const day = (ms: number) => formatUtc(ms).slice(0, 10);
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
  // Each writer's rate either side of the onset, the largest rise first; their sums are the onset's own figures.
  const rises =
    onsetMs === undefined
      ? []
      : writers
          .map((w) => ({ writer: w, before: meanOf(w.points, onsetMs - windowMs, onsetMs), after: meanOf(w.points, onsetMs, onsetMs + windowMs) }))
          .sort((a, b) => b.after - b.before - (a.after - a.before));
  const onset =
    onsetMs === undefined
      ? null
      : {
          timeMs: onsetMs,
          before: rises.reduce((sum, w) => sum + w.before, 0),
          after: rises.reduce((sum, w) => sum + w.after, 0),
          detectedFrom: options.detected ? ("recorded writes" as const) : ("given" as const),
        };
  const largest = rises.length > 0 ? rises[0].after - rises[0].before : 0;
  // The writers that rose (at most five): by a fifth or more, and by a tenth of the largest rise at least; a wobble, or a trickle, is not a rise.
  const rising = rises.filter((w) => w.after > w.before * 1.2 && w.after - w.before >= 0.1 * largest).slice(0, 5);

  // A rollout storm is many changes at one time: each writer's rate is tested once per time.
  const tests = new Map<string, Omit<RateAtChange, "tied">>();
  const rateAt = (w: WriterRate, tsMs: number) => {
    const id = `${w.writer}\u0000${tsMs}`;
    return tests.get(id) ?? tests.set(id, rateAtChange(w, tsMs, options.stepMs, windowMs)).get(id)!;
  };
  const verdicts = changes.map((change): Omit<ChangeVerdict, "said"> => {
    const matches = writers.flatMap((w) => {
      const rests = matchWriter(change, w);
      return rests ? [{ writer: w.writer, rests }] : [];
    });
    // The writers tied to it; where none is, the writers that rose, so that every change is tested against the rate.
    const tested = matches.length > 0 ? matches.map((m) => byWriter.get(m.writer)!) : rising.map((r) => r.writer);
    const rates = tested.map((w) => ({ ...rateAt(w, change.tsMs), tied: matches.length > 0 }));
    const stepped = rates.some((r) => r.stepped);
    const verdict: Verdict = stepped ? (matches.length > 0 ? "moved" : "coincides") : "did not move";
    const precededOnset = onsetMs !== undefined && change.tsMs <= onsetMs && change.tsMs >= onsetMs - lookBackMs;
    return { change, matches, rates, verdict, precededOnset };
  });

  const checks = rising.map(({ writer, before, after }): Omit<WriterCheck, "said"> => {
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
  const said = verdicts.map((v) => ({ ...v, said: saidOf(v) }));
  const writersSaid = checks.map((c) => ({ ...c, said: onsetMs === undefined ? "" : writerSaid(c, onsetMs, lookBackMs) }));
  const conclusion = onset ? conclusionOf(onset, said) : "";
  return { onset, changes: said, writers: writersSaid, conclusion, sentence: sentenceOf(onset, said, writersSaid, conclusion, lookBackMs) };
}

/** The figures of a change's first two tested writers (the answer holds every one). */
function figures(v: Omit<ChangeVerdict, "said">): string {
  return (
    v.rates
      .slice(0, 2)
      .map((r) => `${r.writer} ${rate(r.before)} → ${rate(r.after)}`)
      .join(", ") + (v.rates.length > 2 ? ", …" : "")
  );
}

/** What a change's test found, in words. */
function saidOf(v: Omit<ChangeVerdict, "said">): string {
  const untied = v.matches.length === 0 ? "; no writer ties to it" : "";
  if (v.verdict === "moved") {
    const r = v.rates.find((x) => x.stepped)!;
    return `the rate moved with it: ${r.writer} ${rate(r.before)} → ${rate(r.after)} writes/s (${v.matches.find((m) => m.writer === r.writer)!.rests})`;
  }
  if (v.verdict === "coincides") return `the rate stepped at it too (${figures(v)}), but no writer ties to it: listed, not named`;
  return `the rate did not move (${figures(v) || "no writer rose"}${untied})`;
}

/** What a writer that rose ran at the onset, in words. */
function writerSaid(check: Omit<WriterCheck, "said">, onsetMs: number, lookBackMs: number): string {
  const last = check.lastChange;
  if (last && last.tsMs <= 0) return `${check.writer}: no recorded change.`;
  if (!last) return `${check.writer} (rose ${rate(check.before)} → ${rate(check.after)} writes/s): no recorded workload matches it.`;
  if (last.tsMs < onsetMs - lookBackMs || last.baseline) return `${check.writer}: no change since ${day(last.tsMs)}.`;
  return `${check.writer}: ${last.summary} at ${utc(last.tsMs)}.`;
}

function conclusionOf(onset: NonNullable<WhyAnswer["onset"]>, verdicts: ChangeVerdict[]): string {
  // A cause steps its writer's rate up, and comes before the onset (or with it, within the detector's slack).
  const causes = verdicts.filter(
    (v) => v.verdict === "moved" && v.change.tsMs <= onset.timeMs + CAUSE_SLACK_MS && v.rates.some((r) => r.stepped && r.after > r.before),
  );
  return causes.length === 0
    ? "Not a release: the rate rose with none of the recorded changes."
    : `The onset follows ${causes.map((v) => `${v.change.summary} (${v.change.key.name})`).join(" and ")}.`;
}

/** Changes a sentence names one by one; past it, it counts them. */
const SAID_UP_TO = 5;

function sentenceOf(onset: WhyAnswer["onset"], verdicts: ChangeVerdict[], checks: WriterCheck[], conclusion: string, lookBackMs: number): string {
  if (!onset)
    return verdicts.length === 0 ? "No onset and no recorded change in this range." : `No onset in this range; ${verdicts.length} recorded change(s) listed.`;
  const preceded = verdicts.filter((v) => v.precededOnset);
  const named = (v: ChangeVerdict) => `${v.change.summary} (${objectLabel(v.change.key)}, ${utc(v.change.tsMs)})`;
  const some = (list: ChangeVerdict[]) =>
    list.slice(0, SAID_UP_TO).map(named).join("; ") + (list.length > SAID_UP_TO ? ` and ${list.length - SAID_UP_TO} more` : "");
  // What the rate moved with, or stepped at, said one by one; the rest counted after a few: a rollout storm stays a paragraph.
  const stepped = verdicts.filter((v) => v.verdict !== "did not move");
  const still = verdicts.filter((v) => v.verdict === "did not move");
  const parts = [
    preceded.length === 0
      ? `No recorded change in the ${Math.round(lookBackMs / 3_600_000)} h before the onset at ${utc(onset.timeMs)}.`
      : `Before the onset at ${utc(onset.timeMs)}: ${some(preceded)}.`,
    ...stepped.slice(0, SAID_UP_TO).map((v) => `${named(v)}: ${v.said}.`),
    ...(stepped.length > SAID_UP_TO ? [`And ${stepped.length - SAID_UP_TO} more the rate stepped at.`] : []),
    ...(still.length > 0 ? [`The rate did not move with ${some(still)}.`] : []),
    ...checks.map((c) => c.said),
    conclusion,
  ];
  return parts.join(" ");
}
