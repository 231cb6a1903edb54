/**
 * The code's layers, checked on every run: imports (type imports and dynamic imports included) point
 * down the layers, never in a circle, and browser code imports only the core. Read with TypeScript's
 * own import scanner, not with the modules themselves.
 *   core     pure domain: analysis, churn, panels, PromQL text and answers, wire types, …
 *   sources  what reads or keeps data: the Prometheus client, the stores, snapshots, audit ingest, the recorder
 *   server   the composition of both for requests: context, handlers, the API pipeline
 *   entry    Next's app, components, the CLIs
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/root";

const LAYERS: Record<string, { layer: number; name: string }> = {};
const place = (name: string, layer: number, paths: string[]) => paths.forEach((p) => (LAYERS[p] = { layer, name }));
place(
  "core",
  0,
  [
    "analysis",
    "api",
    "churn",
    "compare",
    "config",
    "format",
    "grafana",
    "markers",
    "metrics",
    "objects",
    "panels",
    "promql",
    "rebuilds",
    "runtime",
    "scenario",
    "snapshot/format",
    "time",
    "wire",
  ].map((d) => `lib/${d}`),
);
place(
  "sources",
  1,
  ["audit", "demo", "prometheus", "recorder", "snapshot", "store"].map((d) => `lib/${d}`),
);
place("server", 2, ["lib/server"]);
place("entry", 3, ["lib/cli", "lib/query", "app", "components", "instrumentation.ts", "proxy.ts"]);
/** Code that runs in the browser: it may import only the core (and itself). */
const BROWSER = ["components", "lib/query"];

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(ROOT, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(join(ROOT, rel)).isDirectory()) walk(rel, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(rel);
  }
  return out;
}

const files = [...walk("lib"), ...walk("app"), ...walk("components"), "instrumentation.ts", "proxy.ts"];
const known = new Set(files);

function resolve(from: string, spec: string): string | undefined {
  let base: string;
  if (spec.startsWith("@/")) base = spec.slice(2);
  else if (spec.startsWith(".")) base = relative(ROOT, normalize(join(ROOT, dirname(from), spec)));
  else return undefined;
  return [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`].find((c) => known.has(c));
}

const imports = new Map(
  files.map((file) => {
    const info = ts.preProcessFile(readFileSync(join(ROOT, file), "utf8"), true, true);
    return [file, [...new Set(info.importedFiles.map((f) => resolve(file, f.fileName)).filter((f): f is string => f !== undefined))]];
  }),
);

function layerOf(file: string): { layer: number; name: string; prefix: string } | undefined {
  const prefix = Object.keys(LAYERS)
    .filter((p) => file === p || file.startsWith(`${p}/`))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? { ...LAYERS[prefix], prefix } : undefined;
}

describe("the code's layers", () => {
  it("places every folder of lib in a layer", () => {
    const unplaced = files.filter((f) => layerOf(f) === undefined);
    expect(unplaced, "add the folder to LAYERS in this test and to docs/code-layout.md").toEqual([]);
    expect(files.length).toBeGreaterThan(100);
  });

  it("imports only down the layers", () => {
    const upward: string[] = [];
    for (const [file, targets] of imports) {
      const from = layerOf(file)!;
      for (const target of targets) {
        const to = layerOf(target)!;
        if (to.layer > from.layer) upward.push(`${file} (${from.name}) → ${target} (${to.name})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("keeps browser code to the core", () => {
    const reaching: string[] = [];
    for (const [file, targets] of imports) {
      if (!BROWSER.some((b) => file.startsWith(`${b}/`))) continue;
      for (const target of targets) if (!BROWSER.some((b) => target.startsWith(`${b}/`)) && layerOf(target)!.layer > 0) reaching.push(`${file} → ${target}`);
    }
    expect(reaching).toEqual([]);
  });

  it("has no import circle", () => {
    // Tarjan's strongly connected components over the import graph.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    let next = 0;
    const visit = (v: string) => {
      index.set(v, next);
      low.set(v, next++);
      stack.push(v);
      onStack.add(v);
      for (const w of imports.get(v) ?? []) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const circle: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          circle.push(w);
        } while (w !== v);
        if (circle.length > 1) circles.push(circle.sort());
      }
    };
    for (const file of files) if (!index.has(file)) visit(file);
    expect(circles).toEqual([]);
  });
});
