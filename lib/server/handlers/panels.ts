/**
 * One panel request, from a snapshot when the request names one, else from Prometheus. Both paths
 * validate the same parameters, so a link behaves the same whichever source answers it.
 */
import { notFound } from "../../api/envelope";
import { PromError } from "../../promql/errors";
import { notConfigured } from "../../api/not-configured";
import type { ServerContext } from "../context";
import { snapshotPanel, type HeldSnapshot } from "../../snapshot/lookup";
import { configuredApiservers } from "../../panels/apiservers";
import { findPanel } from "../../panels/catalog";
import { DEFAULT_CHART_WIDTH, parsePanelParams, rangeParams, type PanelRequest } from "../../panels/params";
import { splitResource } from "../../panels/resource-name";
import { compareArgs, parseCompareArgs, runCompare } from "../../compare/compare";
import { findRebuildPanel } from "../../rebuilds/catalog";
import { runRebuildPanel, type RebuildDeps } from "../../rebuilds/run";
import { requireResource, runPanel, type PanelDeps, type PanelResult } from "../../panels/run-panel";
import { writeLoadRequests, type PanelCall } from "../../panels/write-load-requests";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";

/** What running a panel against Prometheus needs: the Write load panels' and the rebuild panels' dependencies. */
interface RunDeps {
  panel: PanelDeps;
  rebuild: RebuildDeps;
}

/**
 * A kind of panel: which ids it answers, how a request's parameters become its call (validated the same
 * way whether a snapshot or Prometheus answers, and keyed as the page asks, so a snapshot holds what a
 * page asks for), and how it runs against Prometheus. Every panel id is one of these.
 */
interface PanelKind {
  answers(id: string): boolean;
  call(id: string, params: Record<string, string>, range: { nowMs: number; maxRangeMs: number; apiservers: readonly string[] }): PanelCall;
  run(deps: RunDeps, call: PanelCall, signal?: AbortSignal): Promise<PanelResult>;
}

/** The request a call stands for: its range and selection, and the step and chart width it was asked with. */
function requestOf(call: PanelCall): PanelRequest {
  const [resource, group] = splitResource(call.resource);
  const { step, width, dryRun } = call.args ?? {};
  return {
    startMs: call.startMs,
    endMs: call.endMs,
    job: call.apiserver,
    resource,
    group,
    width: width === undefined ? DEFAULT_CHART_WIDTH : Number(width),
    requestedStepSeconds: step === undefined ? undefined : Number(step),
    includeDryRun: dryRun === "include",
  };
}

/** The Write load and Edge rebuilds panels take the same parameters; a step and a width ride along as arguments. */
function rangedCall(id: string, params: Record<string, string>, range: { nowMs: number; maxRangeMs: number; apiservers: readonly string[] }): PanelCall {
  const req = parsePanelParams(params, range.nowMs, range.maxRangeMs, range.apiservers);
  const def = findPanel(id);
  if (def) requireResource(def, req.resource);
  const args: Record<string, string> = {};
  if (req.requestedStepSeconds !== undefined) args.step = String(req.requestedStepSeconds);
  if (req.width !== DEFAULT_CHART_WIDTH) args.width = String(req.width);
  if (req.includeDryRun) args.dryRun = "include";
  return {
    panel: id,
    startMs: req.startMs,
    endMs: req.endMs,
    apiserver: req.job,
    resource: params.resource || undefined,
    ...(Object.keys(args).length > 0 ? { args } : {}),
  };
}

const KINDS: PanelKind[] = [
  {
    answers: (id) => findPanel(id) !== undefined,
    call: rangedCall,
    run: (deps, call, signal) => runPanel(deps.panel, findPanel(call.panel)!, requestOf(call), signal),
  },
  {
    answers: (id) => findRebuildPanel(id) !== undefined,
    call: rangedCall,
    run: (deps, call, signal) => runRebuildPanel(deps.rebuild, findRebuildPanel(call.panel)!, requestOf(call), signal),
  },
  {
    answers: (id) => id === "compare",
    call: (id, params, range) => {
      const { startMs, endMs } = rangeParams(params.from || DEFAULT_FROM, params.to || DEFAULT_TO, range.nowMs, range.maxRangeMs);
      return { panel: id, startMs, endMs, args: compareArgs(parseCompareArgs(params)) };
    },
    run: async (deps, call, signal) =>
      runCompare(
        deps.panel.client,
        { startMs: call.startMs, endMs: call.endMs, ...parseCompareArgs(call.args ?? {}) },
        (await deps.panel.engine?.(signal))?.windows,
        signal,
      ),
  },
];

function kindOf(id: string): PanelKind {
  const kind = KINDS.find((k) => k.answers(id));
  if (!kind) throw notFound(`unknown panel "${id.slice(0, 80)}"`);
  return kind;
}

/** How a snapshot holds a call: a panel that does not show one resource is held without it, as the page asks for it. */
function heldCall(call: PanelCall): PanelCall {
  const { args, ...keyed } = call;
  if (call.panel === "compare") return call;
  const scoped = Object.values(writeLoadRequests(keyed)).some((c) => c?.panel === call.panel && c.resource !== undefined);
  // A snapshot holds what its page asked for: dry runs left out, so a request that counts them is not held.
  return { ...keyed, resource: scoped ? call.resource : undefined, ...(args?.dryRun ? { args: { dryRun: args.dryRun } } : {}) };
}

/**
 * Where a panel's answer comes from: Prometheus, or a snapshot's held answers. Each says which API
 * servers it knows (what a request's `apiserver` is checked against) and answers a call of any kind.
 */
interface PanelSource {
  apiservers: readonly string[];
  answer(kind: PanelKind, call: PanelCall, signal?: AbortSignal): Promise<PanelResult>;
}

function snapshotSource(snapshot: HeldSnapshot): PanelSource {
  return { apiservers: snapshot.apiservers.map((a) => a.job), answer: async (_kind, call) => snapshotPanel(snapshot, heldCall(call)) };
}

function prometheusSource(ctx: ServerContext): PanelSource {
  return {
    apiservers: configuredApiservers(ctx.config.apiservers).map((a) => a.job),
    answer: (kind, call, signal) => {
      if (!ctx.prometheus) throw notConfigured();
      const deps = { panel: ctx.prometheus, rebuild: rebuildDeps(ctx.config, ctx.prometheus) };
      return withinDeadline(ctx, signal, (s) => kind.run(deps, call, s));
    },
  };
}

export async function answerPanel(ctx: ServerContext, id: string, params: Record<string, string>, signal?: AbortSignal): Promise<PanelResult> {
  const kind = kindOf(id);
  const source = params.snapshot === undefined ? prometheusSource(ctx) : snapshotSource(await ctx.snapshots.open(params.snapshot));
  const call = kind.call(id, params, { nowMs: Date.now(), maxRangeMs: ctx.config.limits.maxRangeMs, apiservers: source.apiservers });
  return source.answer(kind, call, signal);
}

/**
 * Runs a panel's calls to Prometheus within prometheus.timeoutSeconds of its request's arrival, however
 * long they wait for a query slot or one another; the browser going away still cancels it.
 */
async function withinDeadline<T>(ctx: ServerContext, signal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const timeoutMs = ctx.config.prometheus?.timeoutMs ?? 30_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    return await run(signal ? AbortSignal.any([signal, deadline]) : deadline);
  } catch (error) {
    const timedOut = (deadline.aborted && !signal?.aborted) || (error instanceof Error && error.name === "TimeoutError");
    if (timedOut) throw new PromError("timeout", `Prometheus did not answer within ${timeoutMs / 1000} s`);
    throw error;
  }
}

export function rebuildDeps(config: ServerContext["config"], prometheus: NonNullable<ServerContext["prometheus"]>): RebuildDeps {
  const [resource, group] = splitResource(config.rebuilds.upstreamResource);
  return {
    client: prometheus.client,
    scrapeIntervalSeconds: prometheus.scrapeIntervalSeconds,
    detect: prometheus.detectRebuilds,
    engine: prometheus.engine,
    siteLabel: config.siteLabel,
    hubJobs: config.apiservers.hub,
    upstream: { resource: resource ?? "connectors", group },
  };
}

/** Runs one panel call (any page's panels) the way the live page would, for snapshot exports. */
export function callRunner(panelDeps: PanelDeps, rebuild: RebuildDeps, signal?: AbortSignal): (call: PanelCall) => Promise<PanelResult> {
  return (call) => kindOf(call.panel).run({ panel: panelDeps, rebuild }, call, signal);
}
