/** The configuration file's shape (churnscope.yaml). Unknown keys are errors, so typos surface. */
import { FLAVORS, SOURCE_RESOLUTIONS } from "../promql/flavor";
import { checkPromQL } from "../promql/parse";
import { z } from "zod";
import { profileSchema } from "../churn/profile-schema";
import { REBUILD_PROFILE_IDS } from "../rebuilds/profiles";

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** A cluster's name in Churnscope (recorded clusters, audit logs): DNS-style. */
export const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Secrets are never written in the file itself: they come from an environment variable or a file. */
export const secretRefSchema = z.union([z.object({ env: z.string().min(1) }).strict(), z.object({ file: z.string().min(1) }).strict()], {
  error: "expected { env: NAME } or { file: PATH }",
});

export const prometheusSchema = z
  .object({
    url: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }),
    bearerToken: secretRefSchema.optional(),
    basicAuth: z
      .object({ username: z.string().min(1), password: secretRefSchema })
      .strict()
      .optional(),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, "expected an HTTP header name"), z.string()).default({}),
    timeoutSeconds: z.number().positive().max(600).default(30),
    /** which engine answers: detected (VictoriaMetrics by its answers' own statistics, Thanos by its store list) or named */
    flavor: z.enum(["auto", ...FLAVORS]).default("auto"),
    /** false sends partial_response=false, so Thanos reports a failing store as an error. */
    partialResponse: z.boolean().default(false),
    /** Thanos: the coarsest blocks a query may read; raw keeps every figure exact, auto lets long ranges read downsampled blocks */
    maxSourceResolution: z.enum(SOURCE_RESOLUTIONS).default("raw"),
    /** ask for gzipped answers: worth it over a slow link, not in the cluster (compressing costs both ends more than carrying) */
    gzip: z.boolean().default(false),
    /** The scrape interval of the apiserver jobs: the smallest step, and a quarter of the smallest rate window. */
    scrapeIntervalSeconds: z.number().int().min(1).max(3600).default(30),
    /** queries sent to Prometheus at once; more wait, and past maxQueuedQueries a panel shows "busy" */
    maxConcurrentQueries: z.number().int().min(1).max(256).default(8),
    maxQueuedQueries: z.number().int().min(0).max(10_000).default(64),
    /**
     * The largest answer read from Prometheus, decoded; past it the panel fails with 502. The default fits the
     * largest panel: 10,000 points × 100 series (the most a panel passes on) at about 45 bytes a point, with room.
     */
    maxAnswerMiB: z.number().positive().max(1024).default(64),
    /** how long an answer is reused for the same query (identical queries in flight always share one call) */
    cacheSeconds: z.number().min(0).max(3600).default(10),
  })
  .strict()
  .refine((p) => !(p.bearerToken && p.basicAuth), { error: "set bearerToken or basicAuth, not both" });

/** An S3-compatible bucket that a managed cluster's audit log is exported to, read object by object as they appear. */
export const auditSourceSchema = z
  .object({
    /** how the source is named on screen and in /metrics */
    name: z.string().regex(CLUSTER_NAME, "expected a DNS-style name such as eks-prod").max(63),
    /** the cluster its requests are stored under; the source's name when unset */
    cluster: z.string().regex(CLUSTER_NAME, "expected a DNS-style name such as prod-eu").max(63).optional(),
    s3: z
      .object({
        bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "expected an S3 bucket name"),
        /** only objects under it are read (Firehose's prefix, say AWSLogs/); none: the whole bucket */
        prefix: z.string().max(1024).default(""),
        /** an S3-compatible server's URL; unset: AWS's own for the region */
        endpoint: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }).optional(),
        /** unset: AWS_REGION, else us-east-1 */
        region: z
          .string()
          .regex(/^[a-z0-9-]+$/, "expected a region such as eu-west-1")
          .optional(),
        /** bucket in the path, not the host name: what most S3-compatible servers need */
        forcePathStyle: z.boolean().default(false),
        /** both or neither; neither: the AWS credential chain (environment, web identity, the instance's role) */
        accessKeyId: secretRefSchema.optional(),
        secretAccessKey: secretRefSchema.optional(),
      })
      .strict()
      .refine((b) => !b.accessKeyId === !b.secretAccessKey, { error: "set accessKeyId and secretAccessKey together, or neither" }),
    pollSeconds: z.number().int().min(1).max(86_400).default(60),
    /** an object larger than this is skipped, and said so */
    maxObjectMiB: z.number().positive().max(65_536).default(1024),
  })
  .strict();

export const configSchema = z
  .object({
    prometheus: prometheusSchema.optional(),
    apiservers: z
      .object({
        /** `job` values of the project control-plane API servers, e.g. milo-apiserver. */
        project: z.array(z.string().min(1)).default([]),
        /** `job` values of the hub API servers, e.g. karmada-system/karmada-apiserver. */
        hub: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ project: [], hub: [] }),
    siteLabel: z.string().regex(LABEL_NAME, "expected a Prometheus label name").default("cluster"),
    /** the labels that tell a component's scrape targets apart in client-go's own metrics (rest_client_requests_total) */
    componentLabels: z.array(z.string().regex(LABEL_NAME, "expected a Prometheus label name")).min(1).max(8).default(["job", "namespace", "container"]),
    /** clusters the recorder lists and watches; none = the kubeconfig's current context (or in-cluster), if any */
    clusters: z
      .array(
        z
          .object({
            name: z.string().regex(CLUSTER_NAME, "expected a DNS-style name"),
            /** a kubeconfig context; the kubeconfig is $KUBECONFIG or ~/.kube/config unless `kubeconfig` is set */
            context: z.string().optional(),
            kubeconfig: z.string().optional(),
            /** use the pod's service account */
            inCluster: z.boolean().default(false),
          })
          .strict(),
      )
      .default([]),
    recorder: z
      .object({
        retentionDays: z.number().positive().max(3650).default(14),
        /** where `npm run recorder` serves /metrics */
        metricsPort: z.number().int().min(1).max(65535).default(9464),
        /** how often a kind the cluster does not serve (its CRD not installed yet) is asked for again */
        unservedRetrySeconds: z.number().min(1).max(3600).default(60),
      })
      .strict()
      .default({ retentionDays: 14, metricsPort: 9464, unservedRetrySeconds: 60 }),
    /** vertical lines on every chart, e.g. releases: time (RFC 3339), label, detail */
    markers: z
      .array(
        z
          .object({
            time: z
              .string()
              .refine((t) => /^\d{4}-\d{2}-\d{2}T/.test(t) && !Number.isNaN(Date.parse(t)), "expected an RFC 3339 time such as 2026-09-11T14:45:00Z"),
            label: z.string().min(1).max(100),
            detail: z.string().max(1000).default(""),
          })
          .strict(),
      )
      .default([]),
    /** markers found by PromQL: one wherever a series of `expr` appears, e.g. a new build-info version */
    markerQueries: z
      .array(
        z
          .object({
            name: z.string().min(1).max(60),
            expr: z
              .string()
              .min(1)
              .max(2_000)
              .superRefine((expr, ctx) => {
                // Checked by Prometheus's own grammar at start, so a typo is found here rather than on every chart.
                const checked = checkPromQL(expr);
                if (!checked.ok) ctx.addIssue({ code: "custom", message: `not PromQL: ${checked.error}` });
              }),
            /** the label whose value names each marker, e.g. version; default: every label */
            label: z.string().regex(LABEL_NAME, "expected a Prometheus label name").optional(),
            detail: z.string().max(1000).default(""),
          })
          .strict(),
      )
      .default([]),
    auth: z
      .object({
        /** the header an auth proxy (oauth2-proxy: X-Forwarded-User) sets to the signed-in user; notes record it as their author */
        userHeader: z
          .string()
          .regex(/^[A-Za-z0-9-]+$/, "expected an HTTP header name")
          .optional(),
        /** built-in access control without a proxy: a bearer token (scripts, Prometheus scraping /metrics) … */
        bearerToken: secretRefSchema.optional(),
        /** … and/or HTTP basic auth (browsers); either one admits a request */
        basicAuth: z
          .object({
            username: z
              .string()
              .min(1)
              .max(200)
              .regex(/^[^:]+$/, "a username cannot contain a colon"),
            password: secretRefSchema,
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({}),
    audit: z
      .object({
        /** the token the kube-apiserver's audit webhook sends (its kubeconfig's user token); unset: the webhook is off */
        webhookToken: secretRefSchema.optional(),
        /** the largest audit log the UI accepts as one upload (streamed to disk, never held in memory) */
        maxUploadMiB: z.number().positive().max(1_048_576).default(2048),
        /** the largest webhook batch (the API server sends at most its --audit-webhook-batch-max-size events) */
        maxWebhookMiB: z.number().positive().max(1024).default(64),
        /** the webhook batches waiting on disk to be taken into the store; past it a batch is refused with 429 (the API server retries) */
        maxSpoolMiB: z.number().positive().max(1_048_576).default(256),
        /** buckets that audit logs are exported to (EKS through Firehose, a storage export), read as objects appear */
        sources: z.array(auditSourceSchema).default([]),
      })
      .strict()
      .refine((a) => new Set(a.sources.map((s) => s.name)).size === a.sources.length, { error: "audit.sources: each source needs a name of its own" })
      .default({ maxUploadMiB: 2048, maxWebhookMiB: 64, maxSpoolMiB: 256, sources: [] }),
    /** object profiles beside the shipped ones; one with a shipped profile's name replaces it */
    profiles: z.array(profileSchema).default([]),
    rebuilds: z
      .object({
        /** which rebuild metrics to read; auto picks the first family Prometheus has */
        profile: z.enum(["auto", ...REBUILD_PROFILE_IDS]).default("auto"),
        /** the upstream writes that rebuilds are divided by (resource.group, on the hub API servers) */
        upstreamResource: z
          .string()
          .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, "expected resource.group, e.g. connectors.networking.datumapis.com")
          .default("connectors.networking.datumapis.com"),
      })
      .strict()
      .default({ profile: "auto", upstreamResource: "connectors.networking.datumapis.com" }),
    server: z
      .object({
        port: z.number().int().min(1).max(65535).default(3000),
        host: z.string().min(1).default("0.0.0.0"),
        /**
         * A second listener, over TLS, on the same host: kube-apiserver sends its audit webhook token only
         * over https, so the webhook needs it (or a TLS proxy in front). PEM files, read at start.
         */
        tls: z
          .object({ port: z.number().int().min(1).max(65535), certFile: z.string().min(1), keyFile: z.string().min(1) })
          .strict()
          .optional(),
      })
      .strict()
      .default({ port: 3000, host: "0.0.0.0" }),
    dataDir: z.string().min(1).default("./data"),
    /**
     * Where the record lives: a SQLite file in dataDir (one process), or a PostgreSQL database that several replicas
     * share. PostgreSQL when a URL is given (here or in CHURNSCOPE_DATABASE_URL) unless engine says otherwise.
     */
    store: z
      .object({
        engine: z.enum(["sqlite", "postgres"]).optional(),
        /** postgres://user:password@host:5432/database: from the environment or a file when it holds a password, else written here */
        url: z
          .union([
            z
              .string()
              .min(1)
              .refine((url) => !/^[a-z]+:\/\/[^/@]*:[^/@]*@/i.test(url), "this URL holds a password: give it as { env: NAME } or { file: PATH }"),
            secretRefSchema,
          ])
          .optional(),
        tls: z
          .object({
            /** disable: plain TCP; require: TLS, any certificate; verify-full: the server's certificate checked against caFile or the system's roots */
            mode: z.enum(["disable", "require", "verify-full"]).default("disable"),
            caFile: z.string().min(1).optional(),
          })
          .strict()
          .default({ mode: "disable" }),
        /** connections per process; each replica holds up to this many, plus two for its roll-up and intake threads */
        poolSize: z.number().int().min(2).max(100).default(10),
        connectTimeoutSeconds: z.number().positive().max(300).default(10),
        /** a statement running longer is cancelled by the server, and its request answers 503 */
        statementTimeoutSeconds: z.number().positive().max(3600).default(60),
      })
      .strict()
      .default({ tls: { mode: "disable" }, poolSize: 10, connectTimeoutSeconds: 10, statementTimeoutSeconds: 60 }),
    limits: z
      .object({
        maxRangeDays: z.number().positive().max(3650).default(400),
        maxSnapshotMiB: z.number().positive().max(1024).default(32),
        maxSnapshotCheckMiB: z.number().int().min(64).max(65536).default(1024),
        /** uploads checked at once (each may take up to maxSnapshotCheckMiB); more wait, and past maxQueuedSnapshotChecks are told to retry */
        maxConcurrentSnapshotChecks: z.number().int().min(1).max(16).default(1),
        maxQueuedSnapshotChecks: z.number().int().min(0).max(100).default(4),
      })
      .strict()
      .default({ maxRangeDays: 400, maxSnapshotMiB: 32, maxSnapshotCheckMiB: 1024, maxConcurrentSnapshotChecks: 1, maxQueuedSnapshotChecks: 4 }),
  })
  .strict();

export type ConfigFile = z.infer<typeof configSchema>;
export type SecretRef = z.infer<typeof secretRefSchema>;
export type AuditSourceFile = z.infer<typeof auditSourceSchema>;
