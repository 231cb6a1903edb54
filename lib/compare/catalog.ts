/**
 * Counters worth comparing, ready to pick: the ones the Connector churn write-up set side by side, written for the
 * configured API server jobs. Picking one fills the selector box, so a pick is also a worked example.
 */
import { literalAlternation, matcher } from "../promql/promql";
import { WRITE_VERBS } from "../panels/queries";
import { parseDurationMs } from "../time/duration";

/** What the counter inputs take, said under them. */
export const SELECTOR_HELP =
  'A counter as a PromQL series selector: metric{label="value", label=~"regex", label!="value", label!~"regex"}. ' +
  "Each window counts sum(increase(selector[window])).";

/** The window buttons; any duration from 1m to 7d can be typed. */
export const WINDOW_PRESETS = ["1h", "3h", "6h"] as const;

const MIN_WINDOW_MS = 60_000;
const MAX_WINDOW_MS = 7 * 86_400_000;

/** A compare window in milliseconds, or what is wrong with it: read alike by the page (to say so) and the API (a 400). */
export function compareWindow(text: string): { ok: true; windowMs: number } | { ok: false; error: string } {
  const windowMs = parseDurationMs(text);
  if (windowMs === null || windowMs < MIN_WINDOW_MS || windowMs > MAX_WINDOW_MS || windowMs % 1000 !== 0)
    return { ok: false, error: `"${text.slice(0, 40)}" is not a window between 1m and 7d in whole seconds, such as 1h, 3h or 6h` };
  return { ok: true, windowMs };
}

export interface CounterPreset {
  id: string;
  title: string;
  selector: string;
}

export interface ComparePreset {
  title: string;
  a: string;
  b: string;
  window: string;
}

function jobMatcher(jobs: string[]): string {
  return jobs.length === 1 ? matcher("job", "=", jobs[0]) : matcher("job", "=~", literalAlternation(jobs));
}

export function counterPresets(apiservers: { project: string[]; hub: string[] }): CounterPreset[] {
  const out: CounterPreset[] = [];
  const writes = matcher("verb", "=~", WRITE_VERBS.join("|"));
  if (apiservers.project.length) {
    const job = jobMatcher(apiservers.project);
    out.push(
      {
        id: "project-connector-writes",
        title: "Connector writes, project control planes",
        selector: `apiserver_request_total{${job}, resource="connectors", ${writes}}`,
      },
      {
        id: "project-connector-status-puts",
        title: "Connector status PUTs, project control planes",
        selector: `apiserver_request_total{${job}, resource="connectors", subresource="status", verb="PUT"}`,
      },
      {
        id: "project-lease-patches",
        title: "Lease renewals (PATCH), project control planes",
        selector: `apiserver_request_total{${job}, resource="leases", verb="PATCH"}`,
      },
    );
  }
  if (apiservers.hub.length) {
    out.push({
      id: "hub-connector-puts",
      title: "Connector PUTs, hub",
      selector: `apiserver_request_total{${jobMatcher(apiservers.hub)}, resource="connectors", verb="PUT"}`,
    });
  }
  out.push({
    id: "connector-reconciles-not-ready",
    // The write-up counted these as reconciles that ended not ready; the selector can only say how they ended for controller-runtime.
    title: 'Connector reconciles, result="success"',
    selector: 'controller_runtime_reconcile_total{controller="connector", result="success"}',
  });
  return out;
}

/** The Connector churn write-up's two tables, when the counters they need are configured. */
export function comparePresets(counters: CounterPreset[]): ComparePreset[] {
  const find = (id: string) => counters.find((c) => c.id === id);
  const out: ComparePreset[] = [];
  const reconciles = find("connector-reconciles-not-ready");
  const status = find("project-connector-status-puts");
  if (reconciles && status)
    out.push({ title: "Connector reconciles (success) vs status PUTs, per 3 h", a: reconciles.selector, b: status.selector, window: "3h" });
  const hub = find("hub-connector-puts");
  const project = find("project-connector-writes");
  if (hub && project) out.push({ title: "Hub Connector PUTs vs project Connector writes, per 6 h", a: hub.selector, b: project.selector, window: "6h" });
  return out;
}
