/**
 * The Clients page's panels, as data: what each component's own client-go counts of its API calls (so a component's
 * calls show where no audit log is kept), and API Priority and Fairness per flow schema on the API servers. A
 * component is a scrape target told apart by the labels `componentLabels` names (configuration: `componentLabels`).
 */
import { byClause, selector } from "../promql/promql";
import { by, counterRate, exactIncrease, m, meanOf, type PanelDef, type PanelVars } from "./queries";

/** The labels that tell components apart when the configuration names none. */
export const DEFAULT_COMPONENT_LABELS = ["job", "namespace", "container"] as const;

const components = (vars: PanelVars) => vars.componentLabels ?? [...DEFAULT_COMPONENT_LABELS];
const apiserver = (vars: PanelVars) => m("job", "=", vars.job);

export const CLIENT_PANELS: readonly PanelDef[] = [
  {
    id: "client-requests",
    title: "API calls by component, as client-go counts them",
    description:
      "Requests per second each component sent, by HTTP method, from its own rest_client_requests_total (GET covers get, list and watch). It counts every call the " +
      "component made, to any API server, whether or not an audit log is kept; the audit log's count is per user agent, this one per scrape target.",
    unit: "requests/s",
    mode: "range",
    chart: "stacked",
    needsResource: false,
    topN: 12,
    queries: (vars) => ({
      queries: [
        {
          promql: `sum${byClause([...components(vars), "method"])} (${counterRate(selector("rest_client_requests_total", []), vars)})`,
          whenEmpty: "No component's rest_client_requests_total is scraped here.",
        },
      ],
      infos: [],
    }),
  },
  {
    id: "client-request-totals",
    title: "API calls per component over the range, as client-go counts them",
    description:
      "Each component's requests over the whole range by method and code, from its own rest_client_requests_total: each counter's rise over the range " +
      "(from its last scrape before it to its last scrape in it), increase() where it restarted within the range.",
    unit: "count",
    mode: "total",
    chart: "table",
    needsResource: false,
    queries: (vars) => ({
      queries: [
        {
          promql: `sum${byClause([...components(vars), "method", "code"])} (${exactIncrease(selector("rest_client_requests_total", []), vars.rangeSeconds)})`,
          whenEmpty: "No component's rest_client_requests_total is scraped here.",
        },
      ],
      infos: [],
    }),
  },
  {
    id: "client-latency",
    title: "API call latency by component",
    description:
      "Mean time each component waited for the API server's answer, by verb (rest_client_request_duration_seconds; controller-runtime registers it only when asked).",
    unit: "s",
    mode: "range",
    chart: "lines",
    needsResource: false,
    largest: 12,
    queries: (vars) => ({
      queries: [
        {
          promql: meanOf({ ...vars, job: "" }, "rest_client_request_duration_seconds", [], [...components(vars), "verb"]),
          whenEmpty: "No component's rest_client_request_duration_seconds is scraped here.",
        },
      ],
      infos: [],
    }),
  },
  {
    id: "client-throttle",
    title: "Client-side throttling by component",
    description:
      "Mean time each component's own rate limiter held a request before sending it (rest_client_rate_limiter_duration_seconds): above zero, the component is " +
      "limited by its own QPS and burst, not by the API server.",
    unit: "s",
    mode: "range",
    chart: "lines",
    needsResource: false,
    largest: 12,
    queries: (vars) => ({
      queries: [
        {
          promql: meanOf({ ...vars, job: "" }, "rest_client_rate_limiter_duration_seconds", [], components(vars)),
          whenEmpty: "No component's rest_client_rate_limiter_duration_seconds is scraped here.",
        },
      ],
      infos: [],
    }),
  },
  {
    id: "apf-dispatched",
    title: "Requests dispatched by flow schema",
    description:
      "Requests per second API Priority and Fairness let through, by flow schema and priority level (apiserver_flowcontrol_dispatched_requests_total): the API server's " +
      "own split of its load by class of client.",
    unit: "requests/s",
    mode: "range",
    chart: "stacked",
    needsResource: false,
    topN: 12,
    queries: (vars) => ({
      queries: [
        {
          promql: `sum${by(vars, ["flow_schema", "priority_level"])} (${counterRate(selector("apiserver_flowcontrol_dispatched_requests_total", [apiserver(vars)]), vars)})`,
          whenEmpty: "apiserver_flowcontrol_dispatched_requests_total is not scraped here.",
        },
      ],
      infos: [],
    }),
  },
  {
    id: "apf-rejected",
    title: "Requests rejected by flow schema",
    description:
      "Requests per second API Priority and Fairness rejected with 429, by flow schema and reason (queue-full, concurrency-limit, time-out, cancelled; " +
      "apiserver_flowcontrol_rejected_requests_total). The table below names the clients that were sending into each.",
    unit: "requests/s",
    mode: "range",
    chart: "lines",
    needsResource: false,
    topN: 12,
    queries: (vars) => ({
      queries: [
        {
          promql: `sum${by(vars, ["flow_schema", "priority_level", "reason"])} (${counterRate(selector("apiserver_flowcontrol_rejected_requests_total", [apiserver(vars)]), vars)})`,
          whenEmpty: "apiserver_flowcontrol_rejected_requests_total is not scraped here (or nothing was ever rejected).",
        },
      ],
      infos: [],
    }),
  },
  {
    id: "apf-queue-wait",
    title: "Queue wait by flow schema",
    description:
      "Mean time a request waited in its priority level's queues before it ran, by flow schema (apiserver_flowcontrol_request_wait_duration_seconds).",
    unit: "s",
    mode: "range",
    chart: "lines",
    needsResource: false,
    largest: 12,
    queries: (vars) => ({
      queries: [
        {
          promql: meanOf(vars, "apiserver_flowcontrol_request_wait_duration_seconds", [apiserver(vars)], ["flow_schema", "priority_level"]),
          whenEmpty: "apiserver_flowcontrol_request_wait_duration_seconds is not scraped here.",
        },
      ],
      infos: [],
    }),
  },
  {
    id: "apf-seats",
    title: "Seats in use against the limit, by priority level",
    description:
      "Seats each priority level's executing requests hold (apiserver_flowcontrol_current_executing_seats), against its nominal limit (apiserver_flowcontrol_nominal_limit_seats), " +
      "summed over the API server's replicas: a level at its limit queues, then rejects.",
    unit: "count",
    mode: "range",
    chart: "lines",
    needsResource: false,
    largest: 24,
    queries: (vars) => ({
      queries: [
        {
          name: "in use",
          promql: `sum${by(vars, ["priority_level"])} (${selector("apiserver_flowcontrol_current_executing_seats", [apiserver(vars)])})`,
          whenEmpty: "apiserver_flowcontrol_current_executing_seats is not scraped here.",
        },
        {
          name: "limit",
          promql: `sum${by(vars, ["priority_level"])} (${selector("apiserver_flowcontrol_nominal_limit_seats", [apiserver(vars)])})`,
          whenEmpty: "apiserver_flowcontrol_nominal_limit_seats is not scraped here.",
        },
      ],
      infos: [],
    }),
  },
];
