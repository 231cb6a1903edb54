/**
 * Every API request counted per client (lib/audit/calls.ts): a row per minute and shape of call with its count, not a
 * row per request (reads are ten to a hundred times the writes). Names (clients, user-agent versions, what was
 * called) are kept once each, per cluster, up to a cap: past it a new name is counted as "other", which the page says.
 * Each watch's end is kept with how long it lived (the median is exact); a watch's start and end pair across batches
 * through the watches still open. What a log's lines were counted through is kept with the counts, in the same
 * transaction, so the same log (a file read again, a batch the API server sent twice) is never counted twice.
 */
import { flagsOf, fromFlags, type ApiCall, type TallyData, type WatchStage } from "../audit/calls";
import { CODE_CLASSES, LIST_SOURCES } from "../wire/api-cost";
import type { SqlValue } from "./engine/types";
import type { StoreConnection } from "./types";

/** Distinct names kept per cluster, by kind: past the cap, a new one is counted as OTHER_NAME. */
export const NAME_CAPS = { client: 2_000, version: 1_000, target: 2_000, flow: 1_000, verb: 100 } as const;
export type NameKind = keyof typeof NAME_CAPS;
export const OTHER_NAME = "other";
/** A client's name as stored: its user and its user agent's name, apart (PostgreSQL's text takes no NUL to join them with). */
export const clientName = (user: string, agent: string) => JSON.stringify([user, agent]);
export const OTHER_CLIENT = clientName(OTHER_NAME, OTHER_NAME);
/** A FlowSchema and its priority level as stored ("" where none is known). */
export const flowName = (flowSchema: string, priorityLevel: string) => (flowSchema === "" ? "" : JSON.stringify([flowSchema, priorityLevel]));

/** Ended watches kept this long, so that a start that arrives after its end (a late webhook batch) is known as counted. */
const ENDED_WATCH_MS = 3_600_000;
/** A webhook batch's identity is kept this long: the API server retries a batch within minutes. */
const BATCH_IDENTITY_MS = 86_400_000;

// Small numbers where a row holds a few values of a kind: a row is a few tens of bytes, and there is one per minute and
// shape of each client's calls.
const COLUMNS = `
  client_id BIGINT NOT NULL, version_id BIGINT NOT NULL, verb_id BIGINT NOT NULL, target_id BIGINT NOT NULL,
  -- the call's shape in one number (shapeOfCall): its flags (bits 0–3: 1 the request named a namespace, 2 a list asked
  -- for a page, 4 a label selector, 8 a field selector), its answer's class (bits 4–6, by CODE_CLASSES: 2xx, 3xx, 4xx,
  -- 429, 5xx, none) and a list's source (bits 7–9, by LIST_FROM: none (not a list), cache, consistent, exact, continue)
  shape INTEGER NOT NULL,
  -- the FlowSchema and priority level that took it (a name: JSON of the two, or '' where none is known)
  flow_id BIGINT NOT NULL`;
const KEY = "ts_ms, client_id, version_id, verb_id, target_id, shape, flow_id";

/** A list's source as stored: its index here. */
const LIST_FROM = ["", ...LIST_SOURCES] as const;

/** A call's flags, answer and list source as the one number stored. */
export function shapeOfCall(c: Pick<ApiCall, "namespaced" | "paginated" | "selectors" | "code" | "listFrom">): number {
  return flagsOf(c) | (CODE_CLASSES.indexOf(c.code) << 4) | (LIST_FROM.indexOf(c.listFrom) << 7);
}

export function fromShape(shape: number): Pick<ApiCall, "namespaced" | "paginated" | "selectors" | "code" | "listFrom"> {
  return { ...fromFlags(shape & 15), code: CODE_CLASSES[(shape >> 4) & 7], listFrom: LIST_FROM[shape >> 7] };
}

/** In SQL, a stored shape's answer class and list source (indexes into CODE_CLASSES and LIST_FROM). */
export const codeSql = (alias: string) => `((${alias}.shape / 16) % 8)`;
export const listFromSql = (alias: string) => `(${alias}.shape / 128)`;
export const REJECTED_CODE = CODE_CLASSES.indexOf("429");
export const CACHE_LIST = LIST_FROM.indexOf("cache");

const NAMES = `
CREATE TABLE IF NOT EXISTS api_names (id BIGINT NOT NULL, cluster TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (id), UNIQUE (cluster, kind, name));
-- Each watch whose start or end was seen (ts_ms: its start), until it is old: how a watch's two stages pair across batches.
CREATE TABLE IF NOT EXISTS api_open_watches (cluster TEXT NOT NULL, audit_id TEXT NOT NULL, ts_ms BIGINT NOT NULL, ended INTEGER NOT NULL, PRIMARY KEY (cluster, audit_id));
-- How far each log was counted (identity: its first line's digest, a bucket object, a webhook batch's digest).
CREATE TABLE IF NOT EXISTS api_sources (cluster TEXT NOT NULL, identity TEXT NOT NULL, lines BIGINT NOT NULL, updated_ms BIGINT NOT NULL, PRIMARY KEY (cluster, identity));
`;

/** SQLite: tables keyed by what they hold (no row ids: the key is the row), one for watches' ends. */
export const API_CALLS_SQLITE = `${NAMES.replace("id BIGINT NOT NULL,", "id INTEGER NOT NULL,").replace("PRIMARY KEY (cluster, audit_id));", "PRIMARY KEY (cluster, audit_id)) WITHOUT ROWID;")}
CREATE TABLE IF NOT EXISTS api_calls (ts_ms BIGINT NOT NULL, ${COLUMNS}, calls BIGINT NOT NULL, PRIMARY KEY (${KEY})) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS api_watch_ends (ts_ms BIGINT NOT NULL, client_id BIGINT NOT NULL, version_id BIGINT NOT NULL, target_id BIGINT NOT NULL, namespaced INTEGER NOT NULL, lifetime_ms BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS api_watch_ends_ts ON api_watch_ends (ts_ms);
`;

/** PostgreSQL: the same, both counted tables partitioned by day (retention drops days). */
export const API_CALLS_POSTGRES = `${NAMES.replace("id BIGINT NOT NULL,", "id BIGINT GENERATED BY DEFAULT AS IDENTITY,")}
CREATE TABLE api_calls (ts_ms BIGINT NOT NULL, ${COLUMNS}, calls BIGINT NOT NULL, PRIMARY KEY (${KEY})) PARTITION BY RANGE (ts_ms);
CREATE TABLE api_watch_ends (ts_ms BIGINT NOT NULL, client_id BIGINT NOT NULL, version_id BIGINT NOT NULL, target_id BIGINT NOT NULL, namespaced INTEGER NOT NULL, lifetime_ms BIGINT NOT NULL) PARTITION BY RANGE (ts_ms);
CREATE INDEX api_watch_ends_ts ON api_watch_ends (ts_ms);
`;

const INSERT_CALLS = `INSERT INTO api_calls (${KEY}, calls)`;
const ADD_CALLS = ` ON CONFLICT (${KEY}) DO UPDATE SET calls = api_calls.calls + excluded.calls`;
const INSERT_ENDS = "INSERT INTO api_watch_ends (ts_ms, client_id, version_id, target_id, namespaced, lifetime_ms)";

/** A counted row as stored, with its names (a client's and a flow's as JSON), its flags and numbers as stored. */
export interface CountedRow {
  minuteMs: number;
  cluster: string;
  client: string;
  version: string;
  verb: string;
  target: string;
  shape: number;
  flow: string;
  calls: number;
}

/** A watch's end as stored, with its names. */
export interface EndedRow {
  minuteMs: number;
  cluster: string;
  client: string;
  version: string;
  target: string;
  namespaced: number;
  lifetimeMs: number;
}

/** What one tally added to the store. */
export interface StoredTally {
  /** false: the same lines were counted before (the whole tally was left out) */
  stored: boolean;
  calls: number;
  watchStarts: number;
  watchEnds: number;
}

/** The names of one cluster this process knows, by kind and text, and how many of each kind the store holds. */
interface ClusterNames {
  ids: Map<string, number>;
  counts: Record<NameKind, number>;
}

export class ApiCalls {
  private readonly clusters = new Map<string, ClusterNames>();

  constructor(private readonly connection: StoreConnection) {}

  private sql() {
    return this.connection.sql();
  }

  /** The last line of a log already counted (0: none of it). */
  async coverage(cluster: string, identity: string): Promise<number> {
    return (await this.sql().get<{ lines: number }>("SELECT lines FROM api_sources WHERE cluster = ? AND identity = ?", [cluster, identity]))?.lines ?? 0;
  }

  private async namesOf(cluster: string): Promise<ClusterNames> {
    let names = this.clusters.get(cluster);
    if (!names) {
      const counts: Record<NameKind, number> = { client: 0, version: 0, target: 0, flow: 0, verb: 0 };
      for (const row of await this.sql().all<{ kind: NameKind; n: number }>("SELECT kind, COUNT(*) AS n FROM api_names WHERE cluster = ? GROUP BY kind", [
        cluster,
      ]))
        counts[row.kind] = Number(row.n);
      names = { ids: new Map(), counts };
      this.clusters.set(cluster, names);
    }
    return names;
  }

  /** A name's id, made if new; past the kind's cap a new name is OTHER_NAME's (the store's cap holds across processes to a name or two). */
  private async idOf(cluster: string, kind: NameKind, name: string): Promise<number> {
    const names = await this.namesOf(cluster);
    const text = `${kind}\u0000${name}`;
    const known = names.ids.get(text);
    if (known !== undefined) return known;
    const find = async () =>
      (await this.sql().get<{ id: number }>("SELECT id FROM api_names WHERE cluster = ? AND kind = ? AND name = ?", [cluster, kind, name]))?.id;
    let id = await find();
    if (id === undefined) {
      const other = kind === "client" ? OTHER_CLIENT : kind === "flow" ? flowName(OTHER_NAME, OTHER_NAME) : OTHER_NAME;
      if (name !== other && names.counts[kind] >= NAME_CAPS[kind]) return this.idOf(cluster, kind, other);
      id =
        (
          await this.sql().get<{ id: number }>("INSERT INTO api_names (cluster, kind, name) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING id", [
            cluster,
            kind,
            name,
          ])
        )?.id ?? (await find())!;
      names.counts[kind]++;
      // A name made in a transaction that rolls back was never made.
      this.connection.onRollback(() => {
        names.ids.delete(text);
        names.counts[kind]--;
      });
    }
    names.ids.set(text, id);
    return id;
  }

  /**
   * A call's row key (minute and name ids) and dimensions, as stored. Most of a tally's names are known already: those
   * are looked up without a statement (and without a promise each, most of the cost of a tally of reads).
   */
  private rowOf(cluster: string, call: ApiCall): SqlValue[] | Promise<SqlValue[]> {
    const named: [NameKind, string][] = [
      ["client", clientName(call.user, call.agent)],
      ["version", call.version],
      ["verb", call.verb],
      ["target", call.target],
      ["flow", flowName(call.flowSchema, call.priorityLevel)],
    ];
    const known = this.clusters.get(cluster)?.ids;
    const ids = named.map(([kind, name]) => known?.get(`${kind}\u0000${name}`));
    const row = (id: (number | undefined)[]): SqlValue[] => [call.minuteMs, id[0]!, id[1]!, id[2]!, id[3]!, shapeOfCall(call), id[4]!];
    if (ids.every((id) => id !== undefined)) return row(ids);
    return (async () => {
      for (const [i, [kind, name]] of named.entries()) ids[i] ??= await this.idOf(cluster, kind, name);
      return row(ids);
    })();
  }

  /**
   * Stores tallies in the current transaction, once per transaction (two of its rows must not meet in one statement):
   * each with the log its lines are of (`identity`), whose lines it was counted through; one is left out whole when the
   * store already counted those lines. Answers what each added.
   */
  async store(cluster: string, tallies: readonly { data: TallyData; identity?: string }[], nowMs = Date.now()): Promise<StoredTally[]> {
    // Counted by row: names past a cap fold into "other", so two calls may share one.
    const rows = new Map<string, { row: SqlValue[]; n: number }>();
    const ends: SqlValue[][] = [];
    const stored: StoredTally[] = [];
    for (const { data, identity } of tallies) {
      const done: StoredTally = { stored: false, calls: 0, watchStarts: 0, watchEnds: 0 };
      stored.push(done);
      if (data.counts.length === 0 && data.watches.length === 0) continue;
      if (identity !== undefined) {
        if ((await this.coverage(cluster, identity)) >= Math.max(1, data.throughLine)) continue;
        await this.sql().run(
          "INSERT INTO api_sources (cluster, identity, lines, updated_ms) VALUES (?, ?, ?, ?) ON CONFLICT (cluster, identity) DO UPDATE SET lines = excluded.lines, updated_ms = excluded.updated_ms",
          [cluster, identity, Math.max(1, data.throughLine), nowMs],
        );
      }
      done.stored = true;
      const count = (row: SqlValue[], n: number) => {
        const key = row.join("\u0000");
        const seen = rows.get(key);
        if (seen) seen.n += n;
        else rows.set(key, { row, n });
        done.calls += n;
      };
      for (const { call, n } of data.counts) {
        const row = this.rowOf(cluster, call);
        count(row instanceof Promise ? await row : row, n);
      }
      for (const watch of data.watches) {
        const started = await this.watchStage(cluster, watch);
        if (started) {
          count(await this.rowOf(cluster, watch.call), 1);
          done.watchStarts++;
        }
        if (watch.endMs !== undefined && (started || (await this.ended(cluster, watch)))) {
          const [, clientId, versionId, , targetId] = await this.rowOf(cluster, watch.call);
          ends.push([Math.floor(watch.endMs / 60_000) * 60_000, clientId, versionId, targetId, watch.call.namespaced ? 1 : 0, watch.endMs - watch.startMs]);
          done.watchEnds++;
        }
      }
    }
    const times = [...rows.values()].map((r) => r.row[0] as number).concat(ends.map((e) => e[0] as number));
    if (times.length > 0) await this.connection.ensureDays(["api_calls", "api_watch_ends"], ...new Set(times));
    for (const { row, n } of rows.values()) this.connection.insertLater(INSERT_CALLS, [...row, n], ADD_CALLS);
    for (const end of ends) this.connection.insertLater(INSERT_ENDS, end);
    return stored;
  }

  /** Watches' ends with their lifetimes as counted elsewhere (a snapshot's), in the current transaction. */
  async addEnds(cluster: string, ends: readonly { call: ApiCall; endMinuteMs: number; lifetimeMs: number }[]): Promise<void> {
    if (ends.length === 0) return;
    await this.connection.ensureDays(["api_watch_ends"], ...new Set(ends.map((e) => e.endMinuteMs)));
    for (const { call, endMinuteMs, lifetimeMs } of ends) {
      const [, clientId, versionId, , targetId] = await this.rowOf(cluster, call);
      this.connection.insertLater(INSERT_ENDS, [endMinuteMs, clientId, versionId, targetId, call.namespaced ? 1 : 0, lifetimeMs]);
    }
  }

  /** The counted rows and watches' ends in [startMs, endMs), with their names, oldest first; null when there are more than `maxRows`. */
  async between(startMs: number, endMs: number, maxRows: number): Promise<{ rows: CountedRow[]; ends: EndedRow[] } | null> {
    const names = "JOIN api_names n ON n.id = c.client_id JOIN api_names v ON v.id = c.version_id JOIN api_names t ON t.id = c.target_id";
    const rows = await this.sql().all<CountedRow>(
      `SELECT c.ts_ms AS "minuteMs", n.cluster, n.name AS client, v.name AS version, vb.name AS verb, t.name AS target, c.shape, f.name AS flow, c.calls
       FROM api_calls c ${names} JOIN api_names vb ON vb.id = c.verb_id JOIN api_names f ON f.id = c.flow_id WHERE c.ts_ms >= ? AND c.ts_ms < ? ORDER BY c.ts_ms LIMIT ?`,
      [startMs, endMs, maxRows + 1],
    );
    if (rows.length > maxRows) return null;
    const ends = await this.sql().all<EndedRow>(
      `SELECT c.ts_ms AS "minuteMs", n.cluster, n.name AS client, v.name AS version, t.name AS target, c.namespaced, c.lifetime_ms AS "lifetimeMs"
       FROM api_watch_ends c ${names} WHERE c.ts_ms >= ? AND c.ts_ms < ? ORDER BY c.ts_ms LIMIT ?`,
      [startMs, endMs, maxRows + 1],
    );
    return ends.length > maxRows ? null : { rows, ends };
  }

  /**
   * A watch's stage against the watches seen open: true when it is the watch's first stage seen (its start is counted
   * now, at its ResponseStarted, or at its end where the log has no start). An end also marks the watch ended.
   */
  private async watchStage(cluster: string, watch: WatchStage): Promise<boolean> {
    const ended = watch.endMs === undefined ? 0 : 1;
    const inserted = await this.sql().run(
      "INSERT INTO api_open_watches (cluster, audit_id, ts_ms, ended) VALUES (?, ?, ?, ?) ON CONFLICT (cluster, audit_id) DO NOTHING",
      [cluster, watch.auditId, watch.startMs, ended],
    );
    return inserted.changes > 0;
  }

  /** A watch's end whose start was seen: marked ended; false when its end was stored already. */
  private async ended(cluster: string, watch: WatchStage): Promise<boolean> {
    const marked = await this.sql().run("UPDATE api_open_watches SET ended = 1 WHERE cluster = ? AND audit_id = ? AND ended = 0", [cluster, watch.auditId]);
    return marked.changes > 0;
  }

  /**
   * Retention beside the counted tables' (store.ts drops their old rows or days): ended watches after an hour, open
   * ones and logs' identities past retention, webhook batches' identities after a day, names no count uses any more.
   */
  async prune(beforeMs: number, nowMs: number): Promise<void> {
    await this.sql().run("DELETE FROM api_open_watches WHERE ts_ms < ? OR (ended = 1 AND ts_ms < ?)", [beforeMs, nowMs - ENDED_WATCH_MS]);
    await this.sql().run("DELETE FROM api_sources WHERE updated_ms < ? OR (identity LIKE 'webhook:%' AND updated_ms < ?)", [
      beforeMs,
      nowMs - BATCH_IDENTITY_MS,
    ]);
    const removed = await this.sql().run(
      `DELETE FROM api_names WHERE id NOT IN (SELECT client_id FROM api_calls UNION SELECT version_id FROM api_calls UNION SELECT target_id FROM api_calls UNION SELECT flow_id FROM api_calls UNION SELECT verb_id FROM api_calls
         UNION SELECT client_id FROM api_watch_ends UNION SELECT version_id FROM api_watch_ends UNION SELECT target_id FROM api_watch_ends)`,
    );
    if (removed.changes > 0) this.clusters.clear();
  }
}
