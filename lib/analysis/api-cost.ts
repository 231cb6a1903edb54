/**
 * What each client and each component cost the API server, from the calls the store counted (lib/store/api-calls.ts):
 * every call by verb and by what it was on, lists by where they were served from, watch starts and re-establishments,
 * and, between two windows, what changed and one sentence that says what fell or rose most. Pure.
 */
import {
  LIST_SOURCES,
  READ_VERBS,
  WRITE_VERBS,
  type CallCount,
  type Change,
  type ComparedRow,
  type CostComparison,
  type CostFigures,
  type CostRow,
  type CostWindow,
  type ListSource,
  type WatchLifetime,
} from "../wire/api-cost";

const READS = new Set<string>(READ_VERBS);
const WRITES = new Set<string>(WRITE_VERBS);

/** The component a client belongs to: its user agent's name (all the service accounts of one agent are one component), or its user where the agent names none. */
export const componentOf = (user: string, agent: string): string => agent || user;
/** A client's name on the page, as the writes' Clients table names it. */
export const clientLabel = (user: string, agent: string): string => `${user} · ${agent}`;

const emptyLists = (): Record<ListSource, number> => Object.fromEntries(LIST_SOURCES.map((s) => [s, 0])) as Record<ListSource, number>;

export function emptyFigures(): CostFigures {
  return {
    calls: 0,
    reads: 0,
    writes: 0,
    nonResource: 0,
    noopWrites: null,
    byVerb: {},
    byTarget: {},
    lists: emptyLists(),
    paginatedLists: 0,
    watchStarts: 0,
    reestablishments: 0,
    rejected: 0,
    failed: 0,
  };
}

const bump = (record: Record<string, number>, key: string, n: number) => void (record[key] = (record[key] ?? 0) + n);

/** Adds counted calls to figures. */
function add(figures: CostFigures, c: CallCount): void {
  figures.calls += c.calls;
  const nonResource = c.target.startsWith("/");
  if (nonResource) figures.nonResource += c.calls;
  else if (READS.has(c.verb)) figures.reads += c.calls;
  else if (WRITES.has(c.verb)) figures.writes += c.calls;
  bump(figures.byVerb, c.verb, c.calls);
  bump(figures.byTarget, c.target, c.calls);
  if (c.listFrom !== "") {
    figures.lists[c.listFrom] += c.calls;
    if (c.paginated) figures.paginatedLists += c.calls;
  }
  if (startedWatch(c)) figures.watchStarts += c.calls;
  if (c.code === "429") figures.rejected += c.calls;
  if (c.code === "4xx" || c.code === "429" || c.code === "5xx") figures.failed += c.calls;
}

/** A watch that started: one the API server answered (a rejected one never ran). */
const startedWatch = (c: CallCount) => c.verb === "watch" && !c.target.startsWith("/") && (c.code === "2xx" || c.code === "none");

/** Watches of one process (a client at one version) on one kind and scope: each after the first is a re-establishment. */
const watcherKey = (c: CallCount) => JSON.stringify([c.user, c.agent, c.version, c.target, c.namespaced]);

/** Figures of a set of counted calls: `noopWrites` from the writes stored one by one, where any is known. */
export function figuresOf(counts: readonly CallCount[], noopWrites: number | null = null): CostFigures {
  const figures = emptyFigures();
  const watchers = new Map<string, number>();
  for (const c of counts) {
    add(figures, c);
    if (startedWatch(c)) watchers.set(watcherKey(c), (watchers.get(watcherKey(c)) ?? 0) + c.calls);
  }
  for (const starts of watchers.values()) figures.reestablishments += Math.max(0, starts - 1);
  figures.noopWrites = noopWrites;
  return figures;
}

/** A watch's lifetime as the store reads its median: per client and kind. */
export interface LifetimeCount extends WatchLifetime {
  user: string;
  agent: string;
}

/** No-op writes per client (`user · agent`), from the writes stored one by one. */
export type NoopsByClient = ReadonlyMap<string, number>;

function rowOf(component: string, user: string, agent: string, client: string, counts: CallCount[], lifetimes: LifetimeCount[], noops: NoopsByClient): CostRow {
  const clients = new Set(counts.map((c) => clientLabel(c.user, c.agent)));
  let noop: number | null = null;
  for (const name of clients) if (noops.has(name)) noop = (noop ?? 0) + noops.get(name)!;
  const versions = new Map<string, number>();
  for (const c of counts) versions.set(c.version, (versions.get(c.version) ?? 0) + c.calls);
  const byTarget = new Map<string, { ended: number; medianMs: number }>();
  for (const l of lifetimes) if (!byTarget.has(l.target)) byTarget.set(l.target, l);
  return {
    ...figuresOf(counts, noop),
    component,
    client,
    user,
    agent,
    versions: [...versions].map(([version, calls]) => ({ version, calls })).sort((a, b) => b.calls - a.calls || a.version.localeCompare(b.version)),
    watchLifetimes: lifetimes.map(({ target, ended, medianMs }) => ({ target, ended, medianMs })),
    members: [],
  };
}

/**
 * One row per component, most calls first, each with its clients where it has more than one (an agent's service
 * accounts, listed one by one). `lifetimes` are per client and per component (user "" for a component's).
 */
export function costRows(counts: readonly CallCount[], lifetimes: readonly LifetimeCount[], noops: NoopsByClient): CostRow[] {
  const byComponent = new Map<string, CallCount[]>();
  for (const c of counts) {
    const component = componentOf(c.user, c.agent);
    (byComponent.get(component) ?? byComponent.set(component, []).get(component)!).push(c);
  }
  const rows: CostRow[] = [];
  for (const [component, calls] of byComponent) {
    const byClient = new Map<string, CallCount[]>();
    for (const c of calls) {
      const client = clientLabel(c.user, c.agent);
      (byClient.get(client) ?? byClient.set(client, []).get(client)!).push(c);
    }
    const members = [...byClient].map(([client, mine]) =>
      rowOf(
        component,
        mine[0].user,
        mine[0].agent,
        client,
        mine,
        lifetimes.filter((l) => l.user === mine[0].user && l.agent === mine[0].agent),
        noops,
      ),
    );
    members.sort(byCalls);
    const single = members.length === 1;
    const row = single
      ? members[0]
      : rowOf(
          component,
          "",
          calls[0].agent,
          component,
          calls,
          lifetimes.filter((l) => l.user === "" && l.agent === component),
          noops,
        );
    row.members = single ? [] : members;
    rows.push(row);
  }
  return rows.sort(byCalls);
}

const byCalls = (a: CostRow, b: CostRow) => b.calls - a.calls || a.client.localeCompare(b.client);

const HOUR_MS = 3_600_000;

export function change(before: number, after: number): Change {
  return { before, after, changePct: before === 0 ? (after === 0 ? 0 : null) : ((after - before) / before) * 100 };
}

/** A change in per cent for a sentence: "−73.8 %", "+12 %", "unchanged", "new". */
export function formatPct(c: Change): string {
  if (c.changePct === null) return "new";
  if (c.changePct === 0) return "unchanged";
  const digits = Math.abs(c.changePct) >= 100 ? 0 : 1;
  return `${c.changePct > 0 ? "+" : "−"}${Math.abs(c.changePct).toFixed(digits)} %`;
}

/** Each side's figures as compared: per hour of its own window where the windows differ in length. */
interface Scales {
  before: (n: number) => number;
  after: (n: number) => number;
}

function changes(before: Record<string, number>, after: Record<string, number>, scale: Scales): Record<string, Change> {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return Object.fromEntries([...keys].sort().map((k) => [k, change(scale.before(before[k] ?? 0), scale.after(after[k] ?? 0))]));
}

/** Calls by verb and what they were on ("watch gatewaypools.net.unbounded-cloud.io"), for the sentence. */
function byVerbTarget(counts: readonly CallCount[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of counts) bump(out, `${c.verb === "watch" ? "watch starts" : `${c.verb}s`} on ${c.target}`, c.calls);
  return out;
}

/** What fell or rose most: the calls, the two largest moves by verb and kind, re-establishments and lists. */
function sentenceOf(name: string, row: Omit<ComparedRow, "sentence">, moves: Record<string, Change>): string {
  const parts = [`${name}: ${formatPct(row.calls)} of API calls`];
  const largest = Object.entries(moves)
    .filter(([, c]) => c.before !== c.after)
    .sort(([a, x], [b, y]) => Math.abs(y.after - y.before) - Math.abs(x.after - x.before) || a.localeCompare(b))
    .slice(0, 2);
  for (const [what, c] of largest) parts.push(`${what} ${formatPct(c)}`);
  if (row.reestablishments.before + row.reestablishments.after > 0) parts.push(`watch re-establishments ${formatPct(row.reestablishments)}`);
  const lists = change(row.listsFromCache.before + row.listsConsistent.before, row.listsFromCache.after + row.listsConsistent.after);
  if (lists.before + lists.after > 0) parts.push(`lists ${formatPct(lists)}`);
  return `${parts[0]}${parts.length > 1 ? `; ${parts.slice(1).join(", ")}` : ""}`;
}

/** One component (or one of its versions) compared between the two windows: counted on each side, then scaled. */
function compared(component: string, detail: string, before: readonly CallCount[], after: readonly CallCount[], scale: Scales): ComparedRow {
  const a = figuresOf(before);
  const b = figuresOf(after);
  const c = (x: number, y: number) => change(scale.before(x), scale.after(y));
  const etcd = (f: CostFigures) => f.lists.consistent + f.lists.exact + f.lists.continue;
  const row = {
    component,
    detail,
    calls: c(a.calls, b.calls),
    reads: c(a.reads, b.reads),
    writes: c(a.writes, b.writes),
    byVerb: changes(a.byVerb, b.byVerb, scale),
    byTarget: changes(a.byTarget, b.byTarget, scale),
    listsFromCache: c(a.lists.cache, b.lists.cache),
    listsConsistent: c(etcd(a), etcd(b)),
    watchStarts: c(a.watchStarts, b.watchStarts),
    reestablishments: c(a.reestablishments, b.reestablishments),
  };
  return { ...row, sentence: sentenceOf(detail ? `${component} ${detail}` : component, row, changes(byVerbTarget(before), byVerbTarget(after), scale)) };
}

/**
 * Each component before and after (all its calls; then each of its user-agent versions, and each client where it
 * has several), most calls first. Windows of different lengths are compared per hour.
 */
export function compareCosts(before: CostWindow, after: CostWindow, counted: { before: readonly CallCount[]; after: readonly CallCount[] }): CostComparison {
  const lengthA = before.endMs - before.startMs;
  const lengthB = after.endMs - after.startMs;
  const perHour = lengthA !== lengthB;
  const scale: Scales = {
    before: (n) => (perHour ? (n * HOUR_MS) / lengthA : n),
    after: (n) => (perHour ? (n * HOUR_MS) / lengthB : n),
  };
  const group = (counts: readonly CallCount[], key: (c: CallCount) => string) => {
    const out = new Map<string, CallCount[]>();
    for (const c of counts) (out.get(key(c)) ?? out.set(key(c), []).get(key(c))!).push(c);
    return out;
  };
  const componentKey = (c: CallCount) => componentOf(c.user, c.agent);
  const beforeBy = group(counted.before, componentKey);
  const afterBy = group(counted.after, componentKey);
  const rows: ComparedRow[] = [];
  for (const component of new Set([...beforeBy.keys(), ...afterBy.keys()])) {
    const mineA = beforeBy.get(component) ?? [];
    const mineB = afterBy.get(component) ?? [];
    rows.push(compared(component, "", mineA, mineB, scale));
    const versionsA = group(mineA, (c) => c.version);
    const versionsB = group(mineB, (c) => c.version);
    const versions = new Set([...versionsA.keys(), ...versionsB.keys()]);
    if (versions.size > 1)
      for (const version of [...versions].sort())
        rows.push(compared(component, version || "(no version)", versionsA.get(version) ?? [], versionsB.get(version) ?? [], scale));
  }
  const order = new Map(rows.filter((r) => r.detail === "").map((r) => [r.component, r.calls.before + r.calls.after]));
  rows.sort(
    (x, y) =>
      order.get(y.component)! - order.get(x.component)! ||
      x.component.localeCompare(y.component) ||
      (x.detail === "" ? -1 : y.detail === "" ? 1 : x.detail.localeCompare(y.detail)),
  );
  return { before, after, perHour, rows };
}
