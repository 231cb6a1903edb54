/**
 * Loads churnscope.yaml (or $CHURNSCOPE_CONFIG) and the environment shortcuts, validates them,
 * reads secrets, and returns the resolved configuration. Any problem is a ConfigError whose
 * message names the key (or environment variable) and the reason; startup prints it and stops.
 */
import type { Flavor, SourceResolution } from "../promql/flavor";
import type { RebuildProfileId } from "../rebuilds/profiles";
import type { MarkerQuery } from "../markers/query-markers";
import { DEFAULT_PROFILES, type Profile } from "../churn/profiles";
import { readFileSync, existsSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { configSchema, type AuditSourceFile, type ConfigFile, type SecretRef } from "./schema";

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export interface PrometheusConfig {
  url: string;
  /** Includes Authorization when credentials are configured. Server-side only. */
  headers: Record<string, string>;
  timeoutMs: number;
  maxAnswerBytes: number;
  partialResponse: boolean;
  gzip: boolean;
  scrapeIntervalSeconds: number;
  /** the engine behind the URL, or auto to detect it */
  flavor: "auto" | Flavor;
  /** the coarsest Thanos blocks a query may read */
  maxSourceResolution: SourceResolution;
  sharing: { cacheMs: number; maxConcurrent: number; maxQueued: number; timeoutMs: number };
}

export interface AppConfig {
  /** Where the configuration came from, for messages: a file path or "defaults". */
  source: string;
  prometheus: PrometheusConfig | null;
  apiservers: { project: string[]; hub: string[] };
  siteLabel: string;
  /** the labels that tell components apart in client-go's own metrics */
  componentLabels: string[];
  rebuilds: { profile: "auto" | RebuildProfileId; upstreamResource: string };
  clusters: { name: string; context?: string; kubeconfig?: string; inCluster: boolean }[];
  markers: { timeMs: number; label: string; detail: string; kind: "release" }[];
  markerQueries: MarkerQuery[];
  /** secrets resolved; server-side only */
  auth: { userHeader?: string; bearerToken?: string; basic?: { username: string; password: string } };
  recorder: { retentionDays: number; metricsPort: number; unservedRetrySeconds: number };
  /** the webhook token resolved; server-side only */
  audit: { webhookToken?: string; maxUploadBytes: number; maxWebhookBytes: number; maxSpoolBytes: number; sources: AuditSourceConfig[] };
  /** the shipped profiles with the configured ones merged in by name */
  profiles: Profile[];
  server: { port: number; host: string; tls?: { port: number; certFile: string; keyFile: string } };
  dataDir: string;
  /** the store's engine; PostgreSQL's settings resolved (its URL holds a password: server-side only) */
  store: StoreConfig;
  /** snapshotCheckMiB: the heap a thread checking an uploaded snapshot may use */
  limits: { maxRangeMs: number; maxSnapshotBytes: number; snapshotCheckMiB: number; concurrentSnapshotChecks: number; queuedSnapshotChecks: number };
}

/** Where the record lives: a SQLite file in dataDir, or a PostgreSQL database; `setting` names where its URL came from. */
export type StoreConfig =
  | { engine: "sqlite" }
  | {
      engine: "postgres";
      setting: string;
      postgres: {
        url: string;
        poolSize: number;
        tls: { mode: "disable" | "require" | "verify-full"; ca?: string };
        connectTimeoutMs: number;
        statementTimeoutMs: number;
      };
    };

/** A bucket audit source with its credentials resolved; server-side only. */
export interface AuditSourceConfig {
  name: string;
  cluster: string;
  bucket: string;
  prefix: string;
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  /** unset: the AWS credential chain */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  pollMs: number;
  maxObjectBytes: number;
}

type Env = Record<string, string | undefined>;

// Environment shortcuts and the file keys they override.
const ENV_KEYS: { env: string; path: string[]; parse: (raw: string) => unknown }[] = [
  { env: "PROMETHEUS_URL", path: ["prometheus", "url"], parse: (raw) => raw },
  { env: "PORT", path: ["server", "port"], parse: (raw) => (/^\d+$/.test(raw) ? Number(raw) : raw) },
  { env: "CHURNSCOPE_DATA_DIR", path: ["dataDir"], parse: (raw) => raw },
];

export function loadConfig(env: Env = process.env, cwd = process.cwd()): AppConfig {
  const explicit = env.CHURNSCOPE_CONFIG;
  const path = explicit ? resolve(cwd, explicit) : resolve(cwd, "churnscope.yaml");
  let raw: Record<string, unknown> = {};
  let source = "defaults";
  if (explicit || existsSync(path)) {
    raw = readYamlObject(path, explicit ? "CHURNSCOPE_CONFIG" : undefined);
    source = path;
  }
  const fromEnv = new Map<string, string>();
  for (const key of ENV_KEYS) {
    const value = env[key.env];
    if (value === undefined || value === "") continue;
    setPath(raw, key.path, key.parse(value));
    fromEnv.set(key.path.join("."), key.env);
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(formatIssues(parsed.error.issues, source, fromEnv));
  return resolveConfig(parsed.data, source, env, cwd);
}

function readYamlObject(path: string, envName?: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const via = envName ? ` (from ${envName})` : "";
    throw new ConfigError(`cannot read configuration file ${path}${via}: ${(error as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`${path}: not valid YAML: ${(error as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new ConfigError(`${path}: the top level must be a mapping of keys (prometheus:, apiservers:, …)`);
  }
  return doc as Record<string, unknown>;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

function formatIssues(issues: z.core.$ZodIssue[], source: string, fromEnv: Map<string, string>): string {
  const lines = issues.map((issue) => {
    const key = issue.path.map(String).join(".");
    let where = key === "" ? source : `${source}: ${key}`;
    const envName = fromEnv.get(key);
    if (envName) where = `${envName} (${key})`;
    const extra = issue.code === "unrecognized_keys" ? `: ${issue.keys.join(", ")}` : "";
    return `${where}: ${issue.message}${extra}`;
  });
  return `invalid configuration:\n  ${lines.join("\n  ")}`;
}

/**
 * A configured secret, never empty: an empty or blank one would turn the check it guards into one that
 * anyone passes (an empty bearer token, an empty password), so it stops startup instead, naming the key.
 */
function auditSource(source: AuditSourceFile, key: string, env: Env, cwd: string): AuditSourceConfig {
  const { s3 } = source;
  return {
    name: source.name,
    cluster: source.cluster ?? source.name,
    bucket: s3.bucket,
    prefix: s3.prefix,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    region: s3.region ?? env.AWS_REGION ?? "us-east-1",
    forcePathStyle: s3.forcePathStyle,
    ...(s3.accessKeyId && s3.secretAccessKey
      ? {
          credentials: {
            accessKeyId: readSecret(s3.accessKeyId, `${key}.s3.accessKeyId`, env, cwd),
            secretAccessKey: readSecret(s3.secretAccessKey, `${key}.s3.secretAccessKey`, env, cwd),
          },
        }
      : {}),
    pollMs: source.pollSeconds * 1000,
    maxObjectBytes: Math.round(source.maxObjectMiB * 1_048_576),
  };
}

function readSecret(ref: SecretRef, key: string, env: Env, cwd: string): string {
  if ("env" in ref) {
    const value = env[ref.env];
    if (value === undefined || value === "") throw new ConfigError(`${key}.env: environment variable ${ref.env} is not set`);
    if (value.trim() === "") throw new ConfigError(`${key}.env: environment variable ${ref.env} holds only whitespace`);
    return value;
  }
  let value: string;
  try {
    value = readFileSync(resolve(cwd, ref.file), "utf8").trim();
  } catch (error) {
    throw new ConfigError(`${key}.file: cannot read ${ref.file}: ${(error as Error).message}`);
  }
  if (value === "") throw new ConfigError(`${key}.file: ${ref.file} is empty (or only whitespace)`);
  return value;
}

/** The environment variable that names the PostgreSQL database when the file does not. */
export const DATABASE_URL_ENV = "CHURNSCOPE_DATABASE_URL";

function storeConfig(store: ConfigFile["store"], env: Env, cwd: string): StoreConfig {
  const fromEnv = env[DATABASE_URL_ENV]?.trim() ? DATABASE_URL_ENV : undefined;
  const engine = store.engine ?? (store.url || fromEnv ? "postgres" : "sqlite");
  if (engine === "sqlite") return { engine };
  const given = store.url;
  const setting =
    given === undefined
      ? DATABASE_URL_ENV
      : typeof given === "string"
        ? "store.url"
        : "env" in given
          ? `store.url (environment variable ${given.env})`
          : `store.url (${given.file})`;
  if (!given && !fromEnv) throw new ConfigError(`store.engine is postgres, but no database is named: set store.url, or ${DATABASE_URL_ENV}`);
  const url = given === undefined ? env[DATABASE_URL_ENV]!.trim() : typeof given === "string" ? given : readSecret(given, "store.url", env, cwd);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${setting}: not a URL; expected postgres://user:password@host:5432/database`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:")
    throw new ConfigError(`${setting}: expected a postgres:// URL, got ${parsed.protocol}//…`);
  let ca: string | undefined;
  if (store.tls.caFile) {
    try {
      ca = readFileSync(resolve(cwd, store.tls.caFile), "utf8");
    } catch (error) {
      throw new ConfigError(`store.tls.caFile: cannot read ${store.tls.caFile}: ${(error as Error).message}`);
    }
  }
  return {
    engine,
    setting,
    postgres: {
      url,
      poolSize: store.poolSize,
      tls: { mode: store.tls.mode, ...(ca ? { ca } : {}) },
      connectTimeoutMs: store.connectTimeoutSeconds * 1000,
      statementTimeoutMs: store.statementTimeoutSeconds * 1000,
    },
  };
}

function resolveConfig(file: ConfigFile, source: string, env: Env, cwd: string): AppConfig {
  let prometheus: PrometheusConfig | null = null;
  if (file.prometheus) {
    const p = file.prometheus;
    const headers: Record<string, string> = { ...p.headers };
    if (p.bearerToken) headers.Authorization = `Bearer ${readSecret(p.bearerToken, "prometheus.bearerToken", env, cwd)}`;
    if (p.basicAuth) {
      const password = readSecret(p.basicAuth.password, "prometheus.basicAuth.password", env, cwd);
      headers.Authorization = `Basic ${Buffer.from(`${p.basicAuth.username}:${password}`).toString("base64")}`;
    }
    prometheus = {
      url: p.url,
      headers,
      timeoutMs: p.timeoutSeconds * 1000,
      maxAnswerBytes: Math.round(p.maxAnswerMiB * 1024 * 1024),
      partialResponse: p.partialResponse,
      gzip: p.gzip,
      scrapeIntervalSeconds: p.scrapeIntervalSeconds,
      flavor: p.flavor,
      maxSourceResolution: p.maxSourceResolution,
      sharing: { cacheMs: p.cacheSeconds * 1000, maxConcurrent: p.maxConcurrentQueries, maxQueued: p.maxQueuedQueries, timeoutMs: p.timeoutSeconds * 1000 },
    };
  }
  return {
    source,
    prometheus,
    apiservers: file.apiservers,
    siteLabel: file.siteLabel,
    componentLabels: file.componentLabels,
    rebuilds: file.rebuilds,
    clusters: file.clusters,
    markers: file.markers.map((m) => ({ timeMs: Date.parse(m.time), label: m.label, detail: m.detail, kind: "release" as const })),
    markerQueries: file.markerQueries,
    auth: {
      ...(file.auth.userHeader ? { userHeader: file.auth.userHeader } : {}),
      ...(file.auth.bearerToken ? { bearerToken: readSecret(file.auth.bearerToken, "auth.bearerToken", env, cwd) } : {}),
      ...(file.auth.basicAuth
        ? { basic: { username: file.auth.basicAuth.username, password: readSecret(file.auth.basicAuth.password, "auth.basicAuth.password", env, cwd) } }
        : {}),
    },
    recorder: file.recorder,
    audit: {
      ...(file.audit.webhookToken ? { webhookToken: readSecret(file.audit.webhookToken, "audit.webhookToken", env, cwd) } : {}),
      maxUploadBytes: Math.round(file.audit.maxUploadMiB * 1_048_576),
      maxWebhookBytes: Math.round(file.audit.maxWebhookMiB * 1_048_576),
      maxSpoolBytes: Math.round(file.audit.maxSpoolMiB * 1_048_576),
      sources: file.audit.sources.map((source, i) => auditSource(source, `audit.sources[${i}]`, env, cwd)),
    },
    profiles: [...DEFAULT_PROFILES.filter((d) => !file.profiles.some((p) => p.name === d.name)), ...file.profiles],
    server: file.server,
    dataDir: resolve(cwd, file.dataDir),
    store: storeConfig(file.store, env, cwd),
    limits: {
      maxRangeMs: file.limits.maxRangeDays * 86_400_000,
      maxSnapshotBytes: Math.round(file.limits.maxSnapshotMiB * 1_048_576),
      snapshotCheckMiB: file.limits.maxSnapshotCheckMiB,
      concurrentSnapshotChecks: file.limits.maxConcurrentSnapshotChecks,
      queuedSnapshotChecks: file.limits.maxQueuedSnapshotChecks,
    },
  };
}
