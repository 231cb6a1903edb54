/**
 * Every API route in one table: its path, who may call it, and for each method the one handler call
 * it makes. The pipeline (api.ts) decides everything else, for all of them alike.
 */
import { notConfigured } from "../api/not-configured";
import { readBodyLimited } from "../api/read-body";
import { listApiservers } from "../panels/apiservers";
import { parsePanelParams } from "../panels/params";
import { info } from "../snapshot/lookup";
import type { ApiRequest } from "./api-request";
import type { ServerContext } from "./context";
import { receiveUpload, receiveWebhook } from "./handlers/audit";
import { auditSourcesAnswer } from "./handlers/audit-sources";
import { answerChanges } from "./handlers/changes";
import { answerOnset } from "./handlers/onset";
import { apiCostAnswer } from "./handlers/api-cost";
import { clientsAnswer } from "./handlers/clients";
import { exportView, type Download } from "./handlers/export-view";
import { grafanaExport } from "./handlers/grafana";
import { addNote, answerMarkers, deleteNote } from "./handlers/markers";
import { listFields, listLanes, listObjects, objectAnswer } from "./handlers/objects";
import { flapsAnswer, traitsAnswer } from "./handlers/conditions";
import { answerPanel } from "./handlers/panels";

/** What a handler is given: the request (for a body), its query, the path's captured parts, the admitted user. */
export interface ApiCall {
  ctx: ServerContext;
  request: ApiRequest;
  query: Record<string, string>;
  /** the route's captured path parts, as sent (still percent-encoded); an optional part not sent is undefined */
  captured: (string | undefined)[];
  user?: string;
  signal: AbortSignal;
}

/** A handler's answer: an envelope's data (with warnings and infos), or a file to download. */
export type Answer = { data: unknown; warnings?: string[]; infos?: string[] } | { download: Download };

type Method = "GET" | "POST" | "DELETE";

export interface ApiRoute {
  path: RegExp;
  /** the dashboard's users (auth.*), or the API server's audit webhook, whose handler checks audit.webhookToken */
  access: "user" | "webhook";
  /**
   * `true`, a panel: the encoded answer is shared while Prometheus's is, with an ETag. `"snapshot"`: a snapshot's
   * answer is shared for as long as it is kept (a snapshot never changes), a live one not at all.
   */
  shared?: true | "snapshot";
  methods: Partial<Record<Method, (call: ApiCall) => Promise<Answer>>>;
}

/** A captured part as named (the pipeline has already refused a malformed escape). */
const decoded = (part: string | undefined) => decodeURIComponent(part ?? "");

async function apiservers({ ctx, query, signal }: ApiCall): Promise<Answer> {
  const { config, prometheus, snapshots } = ctx;
  if (query.snapshot !== undefined) return { data: (await snapshots.open(query.snapshot)).apiservers };
  const { startMs, endMs } = parsePanelParams(query, Date.now(), config.limits.maxRangeMs, []);
  if (!prometheus) throw notConfigured();
  return listApiservers(prometheus.client, config.apiservers, { startSeconds: Math.floor(startMs / 1000), endSeconds: Math.ceil(endMs / 1000) }, signal);
}

export const API_ROUTES: readonly ApiRoute[] = [
  {
    path: /^\/api\/panels\/([^/]+)$/,
    access: "user",
    shared: true,
    methods: { GET: ({ ctx, captured, query, signal }) => answerPanel(ctx, decoded(captured[0]), query, signal) },
  },
  { path: /^\/api\/onset$/, access: "user", shared: "snapshot", methods: { GET: ({ ctx, query, signal }) => answerOnset(ctx, query, signal) } },
  { path: /^\/api\/changes$/, access: "user", methods: { GET: ({ ctx, query }) => answerChanges(ctx, query) } },
  { path: /^\/api\/objects$/, access: "user", methods: { GET: ({ ctx, query }) => listObjects(ctx, query) } },
  { path: /^\/api\/objects\/lanes$/, access: "user", methods: { GET: ({ ctx, query }) => listLanes(ctx, query) } },
  { path: /^\/api\/objects\/traits$/, access: "user", methods: { GET: ({ ctx, query }) => traitsAnswer(ctx, query) } },
  { path: /^\/api\/objects\/flaps$/, access: "user", methods: { GET: ({ ctx, query }) => flapsAnswer(ctx, query) } },
  // Segments stay as sent: objectRoute decodes each once.
  {
    path: /^\/api\/objects\/(.+)$/,
    access: "user",
    methods: { GET: async ({ ctx, captured, query }) => objectAnswer(ctx, (captured[0] ?? "").split("/"), query) },
  },
  { path: /^\/api\/markers$/, access: "user", methods: { GET: ({ ctx, query, signal }) => answerMarkers(ctx, query, signal) } },
  { path: /^\/api\/apiservers$/, access: "user", methods: { GET: apiservers } },
  { path: /^\/api\/clients$/, access: "user", shared: "snapshot", methods: { GET: async ({ ctx, query }) => clientsAnswer(ctx, query) } },
  { path: /^\/api\/clients\/calls$/, access: "user", shared: "snapshot", methods: { GET: async ({ ctx, query }) => apiCostAnswer(ctx, query) } },
  { path: /^\/api\/fields$/, access: "user", methods: { GET: ({ ctx, query }) => listFields(ctx, query) } },
  {
    path: /^\/api\/snapshots$/,
    access: "user",
    methods: { POST: async ({ ctx, request }) => ({ data: await ctx.snapshots.put(await readBodyLimited(request.body, ctx.snapshots.maxBytes)) }) },
  },
  {
    path: /^\/api\/grafana$/,
    access: "user",
    methods: { GET: async ({ ctx, query, signal }) => ({ download: await grafanaExport(ctx, query, signal) }) },
  },
  {
    path: /^\/api\/snapshots\/export$/,
    access: "user",
    methods: { GET: async ({ ctx, query, signal }) => ({ download: await exportView(ctx, query, signal) }) },
  },
  {
    path: /^\/api\/snapshots\/([^/]+)$/,
    access: "user",
    methods: { GET: async ({ ctx, captured }) => ({ data: info(await ctx.snapshots.open(decoded(captured[0])), decoded(captured[0])) }) },
  },
  { path: /^\/api\/notes$/, access: "user", methods: { POST: ({ ctx, request, user, query }) => addNote(ctx, request.body, user, query.snapshot) } },
  { path: /^\/api\/notes\/([^/]+)$/, access: "user", methods: { DELETE: ({ ctx, captured }) => deleteNote(ctx, decoded(captured[0])) } },
  {
    path: /^\/api\/audit\/webhook(?:\/([^/]+))?$/,
    access: "webhook",
    methods: { POST: ({ ctx, request, query, captured }) => receiveWebhook(ctx, request, query, captured[0] === undefined ? undefined : decoded(captured[0])) },
  },
  { path: /^\/api\/audit\/sources$/, access: "user", methods: { GET: async ({ ctx }) => auditSourcesAnswer(ctx) } },
  { path: /^\/api\/audit\/uploads$/, access: "user", methods: { POST: ({ ctx, request, query }) => receiveUpload(ctx, request, query) } },
];

/** The route at `path` with what it captured, or null. */
export function findRoute(path: string): { route: ApiRoute; captured: string[] } | null {
  for (const route of API_ROUTES) {
    const match = route.path.exec(path);
    if (match) return { route, captured: match.slice(1) };
  }
  return null;
}

/** The methods the route at `path` takes (HEAD with GET, OPTIONS always); null for a path that is not an API route. */
export function apiMethods(path: string): string[] | null {
  const found = findRoute(path);
  if (!found) return null;
  const methods = Object.keys(found.route.methods);
  return [...methods, ...(methods.includes("GET") ? ["HEAD"] : [])];
}
