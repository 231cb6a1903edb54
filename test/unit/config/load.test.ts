import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze } from "@/lib/churn/analyze";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { ConfigError, loadConfig } from "@/lib/config/load";

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "churnscope-cfg-test-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("configuration", () => {
  it("runs with nothing configured: no Prometheus, defaults everywhere", () => {
    const config = loadConfig({}, dirWith({}));
    expect(config.prometheus).toBeNull();
    expect(config.server.port).toBe(3000);
    expect(config.siteLabel).toBe("cluster");
    expect(config.dataDir.endsWith("/data")).toBe(true);
  });

  it("reads churnscope.yaml from the working directory, with secrets from env and files", () => {
    const dir = dirWith({
      "churnscope.yaml": [
        "prometheus:",
        "  url: https://thanos.example:9090/prom",
        "  bearerToken: { file: token.txt }",
        "  headers: { X-Scope-OrgID: tenant-a }",
        "  timeoutSeconds: 5",
        "  gzip: true",
        "apiservers:",
        "  project: [milo-apiserver]",
        "  hub: [karmada-system/karmada-apiserver]",
        "siteLabel: site",
      ].join("\n"),
      "token.txt": "abc123\n",
    });
    const config = loadConfig({}, dir);
    expect(config.prometheus).toMatchObject({
      url: "https://thanos.example:9090/prom",
      timeoutMs: 5000,
      partialResponse: false,
      gzip: true,
      headers: { Authorization: "Bearer abc123", "X-Scope-OrgID": "tenant-a" },
    });
    expect(config.apiservers).toEqual({ project: ["milo-apiserver"], hub: ["karmada-system/karmada-apiserver"] });
    expect(config.siteLabel).toBe("site");
  });

  it("builds basic auth from a password in the environment", () => {
    const dir = dirWith({ "c.yaml": "prometheus:\n  url: http://p:9090\n  basicAuth: { username: sre, password: { env: PROM_PASS } }\n" });
    const config = loadConfig({ CHURNSCOPE_CONFIG: "c.yaml", PROM_PASS: "pw" }, dir);
    expect(config.prometheus?.headers.Authorization).toBe(`Basic ${Buffer.from("sre:pw").toString("base64")}`);
    expect(config.prometheus?.gzip).toBe(false);
  });

  it("lets environment shortcuts override the file", () => {
    const dir = dirWith({ "churnscope.yaml": "prometheus:\n  url: http://file:9090\nserver:\n  port: 4000\n" });
    const config = loadConfig({ PROMETHEUS_URL: "http://env:9090", PORT: "3100", CHURNSCOPE_DATA_DIR: "/tmp/cs" }, dir);
    expect(config.prometheus?.url).toBe("http://env:9090");
    expect(config.server.port).toBe(3100);
    expect(config.dataDir).toBe("/tmp/cs");
  });

  it("checks marker queries with Prometheus's grammar, saying which one and where", () => {
    const good = "changes(nso_build_info[5m]) > 0";
    const dir = dirWith({
      "churnscope.yaml": `markerQueries:\n  - { name: ok, expr: "${good}" }\n  - { name: typo, expr: "sum(rate(x[5m])" }\n  - { name: op, expr: "up{job=~}" }\n`,
    });
    const text = message(() => loadConfig({}, dir));
    expect(text).toMatch(/markerQueries\.1\.expr: not PromQL: column 16: unexpected the end/);
    expect(text).toMatch(/markerQueries\.2\.expr: not PromQL: column 9: unexpected /);
    expect(text).not.toMatch(/markerQueries\.0/);
  });

  it("names the key and the reason for every bad value", () => {
    const dir = dirWith({ "churnscope.yaml": "prometheus:\n  url: http://p:9090\n  timeoutSeconds: -3\n  ulr: typo\nsiteLabel: 'bad-label'\n" });
    const text = message(() => loadConfig({}, dir));
    expect(text).toMatch(/prometheus\.timeoutSeconds: .*>0/);
    expect(text).toMatch(/prometheus: .*ulr/);
    expect(text).toMatch(/siteLabel: expected a Prometheus label name/);
  });

  it("names the environment variable when a shortcut is bad", () => {
    expect(message(() => loadConfig({ PORT: "99999" }, dirWith({})))).toMatch(/PORT \(server\.port\)/);
    expect(message(() => loadConfig({ PROMETHEUS_URL: "ftp://x" }, dirWith({})))).toMatch(/PROMETHEUS_URL \(prometheus\.url\): expected an http/);
  });

  it("reports missing files, bad YAML and missing secrets", () => {
    expect(message(() => loadConfig({ CHURNSCOPE_CONFIG: "nope.yaml" }, dirWith({})))).toMatch(
      /cannot read configuration file .*nope\.yaml \(from CHURNSCOPE_CONFIG\)/,
    );
    expect(message(() => loadConfig({}, dirWith({ "churnscope.yaml": "prometheus: [unclosed" })))).toMatch(/not valid YAML/);
    expect(message(() => loadConfig({}, dirWith({ "churnscope.yaml": "- a list" })))).toMatch(/top level must be a mapping/);
    const noEnv = dirWith({ "churnscope.yaml": "prometheus:\n  url: http://p:9090\n  bearerToken: { env: MISSING_TOKEN }\n" });
    expect(message(() => loadConfig({}, noEnv))).toMatch(/prometheus\.bearerToken\.env: environment variable MISSING_TOKEN is not set/);
  });
});

describe("profiles in the configuration", () => {
  it("adds a profile for another kind without code, and replaces a shipped one by name", () => {
    const dir = dirWith({
      "churnscope.yaml": [
        "profiles:",
        "  - name: deployment",
        "    group: apps",
        "    version: v1",
        "    resource: deployments",
        "    kind: Deployment",
        "    source: { path: $.spec }",
        '    routed: { image: { path: "$.template.spec.containers[*].image" } }',
        "    ignore: [$.metadata.resourceVersion, $.status.observedGeneration]",
        "  - name: lease",
        "    group: coordination.k8s.io",
        "    version: v1",
        "    resource: leases",
        "    kind: Lease",
        "    routed: { holder: { path: $.spec.holderIdentity } }",
      ].join("\n"),
    });
    const config = loadConfig({}, dir);
    // The shipped ones first, less the two replaced by name, then the file's.
    const shipped = DEFAULT_PROFILES.map((p) => p.name).filter((name) => name !== "deployment" && name !== "lease");
    expect(config.profiles.map((p) => p.name)).toEqual([...shipped, "deployment", "lease"]);
    expect(config.profiles.find((p) => p.name === "deployment")?.routed).toEqual({ image: { path: "$.template.spec.containers[*].image" } });
    expect(config.profiles.find((p) => p.name === "lease")?.heartbeat).toEqual([]);
  });

  it("leaves out what every write changes (resourceVersion, managedFields, generation) in a profile with no ignore list, or one replacing a shipped one", () => {
    const dir = dirWith({
      "churnscope.yaml": [
        "profiles:",
        "  - { name: deployment, group: apps, version: v1, resource: deployments, kind: Deployment, routed: { replicas: { path: $.spec.replicas } } }",
        "  - { name: lease, group: coordination.k8s.io, version: v1, resource: leases, kind: Lease, routed: { holder: { path: $.spec.holderIdentity } },",
        "      ignore: [$.spec.leaseTransitions] }",
      ].join("\n"),
    });
    const config = loadConfig({}, dir);
    const version = (rv: string, manager: string, generation: number, spec: { replicas: number }) => ({
      metadata: { name: "x", resourceVersion: rv, generation, managedFields: [{ manager, operation: "Update", time: `2026-12-02T10:00:0${rv}Z` }] },
      spec,
    });
    for (const name of ["deployment", "lease"]) {
      const profile = config.profiles.find((p) => p.name === name)!;
      // Only what every write changes moved: nothing the profile keeps did.
      expect(analyze(profile, version("1", "a", 1, { replicas: 2 }), version("2", "b", 2, { replicas: 2 })).changes, name).toEqual([]);
      expect(analyze(profile, version("1", "a", 1, { replicas: 2 }), version("2", "b", 2, { replicas: 3 })).changes, name).toEqual([
        { path: "spec.replicas", before: 2, after: 3 },
      ]);
    }
    expect(config.profiles.find((p) => p.name === "lease")!.ignore).toContain("$.spec.leaseTransitions");
  });

  it("rejects a path that is not JSONPath, naming the key", () => {
    const dir = dirWith({ "churnscope.yaml": "profiles:\n  - { name: x, group: g, version: v1, resource: xs, kind: X, routed: { a: { path: spec.a } } }\n" });
    expect(message(() => loadConfig({}, dir))).toMatch(/profiles\.0\.routed\.a\.path: expected a JSONPath starting with \$/);
  });

  it("rejects a JSONPath that does not parse, which would fail every write it reads, and takes the shipped ones", () => {
    for (const path of ["$.status.conditions[?(@.type=='Ready'", "$.status.conditions[?(@.type=='Ready)].status", "$.status[?(@.a ===)]"]) {
      const dir = dirWith({
        "churnscope.yaml": `profiles:\n  - { name: x, group: g, version: v1, resource: xs, kind: X, routed: { ready: { path: ${JSON.stringify(path)} } } }\n`,
      });
      expect(
        message(() => loadConfig({}, dir)),
        path,
      ).toMatch(/profiles\.0\.routed\.ready\.path: not a JSONPath that jsonpath-plus can read/);
    }
    const fine = [
      "$.status.conditions[?(@.type=='Ready')].status",
      "$.metadata.annotations['networking.datumapis.com/upstream-status']",
      "$..conditions[*].lastTransitionTime",
      "$.status.addresses[0].ip",
      "$.status[?(@.a.b.c == 'x')]",
    ];
    for (const path of fine) {
      const dir = dirWith({
        "churnscope.yaml": `profiles:\n  - { name: x, group: g, version: v1, resource: xs, kind: X, routed: { ready: { path: ${JSON.stringify(path)} } } }\n`,
      });
      expect(loadConfig({}, dir).profiles.find((p) => p.name === "x")?.routed.ready.path, path).toBe(path);
    }
  });
});

describe("the annotated example", () => {
  it("is a valid configuration", () => {
    const config = loadConfig({ CHURNSCOPE_CONFIG: join(process.cwd(), "churnscope.example.yaml") }, dirWith({}));
    expect(config.prometheus?.url).toBe("http://prometheus.monitoring.svc:9090");
    expect(config.rebuilds).toEqual({ profile: "auto", upstreamResource: "connectors.networking.datumapis.com" });
    // The example adds no profile: the shipped ones, the workloads and GitOps kinds whose changes are recorded included.
    expect(config.profiles.map((p) => p.name)).toEqual(DEFAULT_PROFILES.map((p) => p.name));
    expect(config.profiles.filter((p) => p.changes === "template").map((p) => p.kind)).toEqual(["Deployment", "StatefulSet", "DaemonSet"]);
  });
});

describe("markers in the configuration", () => {
  it("become release markers at their time, and a bad time names the key", () => {
    const config = loadConfig(
      {},
      dirWith({ "churnscope.yaml": "markers:\n  - { time: '2026-09-11T14:45:00Z', label: infra v0.83.42, detail: stable sites }\n" }),
    );
    expect(config.markers).toEqual([{ timeMs: Date.parse("2026-09-11T14:45:00Z"), label: "infra v0.83.42", detail: "stable sites", kind: "release" }]);
    const text = message(() => loadConfig({}, dirWith({ "churnscope.yaml": "markers:\n  - { time: yesterday, label: x }\n" })));
    expect(text).toMatch(/markers\.0\.time: expected an RFC 3339 time/);
  });
});

describe("audit bucket sources in the configuration", () => {
  it("resolves audit bucket sources' credentials and refuses half of a pair, twin names and a bad bucket", () => {
    const source = (extra: string) =>
      ["audit:", "  sources:", "    - name: eks-prod", "      s3:", "        bucket: audit-logs", ...extra.split("\n").filter(Boolean)].join("\n") + "\n";
    const config = loadConfig(
      { S3_KEY: "AKIAEXAMPLE", S3_SECRET: "s3cret" },
      dirWith({ "churnscope.yaml": source("        accessKeyId: { env: S3_KEY }\n        secretAccessKey: { env: S3_SECRET }") }),
    );
    expect(config.audit.sources).toEqual([
      {
        name: "eks-prod",
        cluster: "eks-prod",
        bucket: "audit-logs",
        prefix: "",
        region: "us-east-1",
        forcePathStyle: false,
        credentials: { accessKeyId: "AKIAEXAMPLE", secretAccessKey: "s3cret" },
        pollMs: 60_000,
        maxObjectBytes: 1024 * 1_048_576,
      },
    ]);
    expect(loadConfig({ AWS_REGION: "eu-west-1" }, dirWith({ "churnscope.yaml": source("") })).audit.sources[0]).toMatchObject({ region: "eu-west-1" });
    expect(loadConfig({}, dirWith({ "churnscope.yaml": source("") })).audit.sources[0].credentials).toBeUndefined();
    expect(message(() => loadConfig({ S3_KEY: "k" }, dirWith({ "churnscope.yaml": source("        accessKeyId: { env: S3_KEY }") })))).toMatch(
      /accessKeyId and secretAccessKey together/,
    );
    expect(message(() => loadConfig({}, dirWith({ "churnscope.yaml": source("").replace("audit-logs", "Not_A_Bucket") })))).toMatch(/S3 bucket name/);
    const twice = ["audit:", "  sources:", ...["a", "a"].flatMap((n) => [`    - name: ${n}`, "      s3: { bucket: audit-logs }"])].join("\n");
    expect(message(() => loadConfig({}, dirWith({ "churnscope.yaml": twice })))).toMatch(/a name of its own/);
  });
});

describe("the store in the configuration", () => {
  it("is a SQLite file by default, and PostgreSQL once a database is named, in the file or the environment", () => {
    expect(loadConfig({}, dirWith({})).store).toEqual({ engine: "sqlite" });
    const url = "postgres://churnscope:pw@db.internal:5433/churnscope";
    const fromEnv = loadConfig({ CHURNSCOPE_DATABASE_URL: url }, dirWith({})).store;
    expect(fromEnv).toEqual({
      engine: "postgres",
      setting: "CHURNSCOPE_DATABASE_URL",
      postgres: { url, poolSize: 10, tls: { mode: "disable" }, connectTimeoutMs: 10_000, statementTimeoutMs: 60_000 },
    });
    const dir = dirWith({
      "churnscope.yaml": "store:\n  url: { file: db-url }\n  poolSize: 4\n  tls: { mode: verify-full, caFile: ca.pem }\n",
      "db-url": `${url}\n`,
      "ca.pem": "-----BEGIN CERTIFICATE-----\n",
    });
    expect(loadConfig({}, dir).store).toEqual({
      engine: "postgres",
      setting: "store.url (db-url)",
      postgres: { url, poolSize: 4, tls: { mode: "verify-full", ca: "-----BEGIN CERTIFICATE-----\n" }, connectTimeoutMs: 10_000, statementTimeoutMs: 60_000 },
    });
    // Named, but SQLite chosen: the file stays the store.
    expect(loadConfig({ CHURNSCOPE_DATABASE_URL: url }, dirWith({ "churnscope.yaml": "store:\n  engine: sqlite\n" })).store).toEqual({ engine: "sqlite" });
  });

  it("says what is wrong with a store setting, and never writes a password into the file", () => {
    expect(message(() => loadConfig({}, dirWith({ "churnscope.yaml": "store:\n  engine: postgres\n" })))).toMatch(
      /store\.engine is postgres, but no database is named: set store\.url, or CHURNSCOPE_DATABASE_URL/,
    );
    expect(message(() => loadConfig({}, dirWith({ "churnscope.yaml": "store:\n  url: postgres://u:secret@db/x\n" })))).toMatch(
      /store\.url.*holds a password: give it as \{ env: NAME \} or \{ file: PATH \}/,
    );
    expect(message(() => loadConfig({ CHURNSCOPE_DATABASE_URL: "mysql://db/x" }, dirWith({})))).toMatch(
      /CHURNSCOPE_DATABASE_URL: expected a postgres:\/\/ URL/,
    );
    expect(message(() => loadConfig({}, dirWith({ "churnscope.yaml": "store:\n  url: { env: DB_URL }\n" })))).toMatch(
      /store\.url\.env: environment variable DB_URL is not set/,
    );
    expect(message(() => loadConfig({}, dirWith({ "churnscope.yaml": "store:\n  poolSize: 1\n" })))).toMatch(/store\.poolSize/);
    // A plain URL without a password may be written in the file.
    expect(loadConfig({}, dirWith({ "churnscope.yaml": "store:\n  url: postgres://db.internal/churnscope\n" })).store).toMatchObject({
      engine: "postgres",
      setting: "store.url",
    });
  });
});
