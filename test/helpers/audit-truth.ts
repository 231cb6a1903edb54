/**
 * The API server's own audit log, read independently of Churnscope's ingester: every completed write
 * (ResponseComplete; 2xx unless asked) with the resourceVersion the server answered, who sent it and when.
 * Dry runs (?dryRun=All in the request URI) are answered and never stored: they are not writes here.
 */
import { readFileSync } from "node:fs";

export interface ServerWrite {
  auditID: string;
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  code: number;
  user: string;
  userAgent: string;
  /** metadata.resourceVersion of the response object ("" when the response held none) */
  resourceVersion: string;
  stageMs: number;
  receivedMs: number;
  /** the field manager of the response object's newest managedFields entry */
  newestManager: string;
}

const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** Read here on its own: a `dryRun` query parameter with any value but an empty one. */
export const isDryRunUri = (uri: string) => /[?&]dryRun=[^&]/.test(uri);

/** `includeFailed`: also the writes the server refused (4xx, 5xx). */
export function serverWrites(auditLogPath: string, { includeFailed = false } = {}): ServerWrite[] {
  const out: ServerWrite[] = [];
  for (const line of readFileSync(auditLogPath, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const e = JSON.parse(line);
    if (e.stage !== "ResponseComplete" || !WRITE_VERBS.has(e.verb) || isDryRunUri(e.requestURI ?? "")) continue;
    const code = e.responseStatus?.code ?? 0;
    if (!includeFailed && (code < 200 || code > 299)) continue;
    const ref = e.objectRef ?? {};
    out.push({
      auditID: e.auditID,
      verb: e.verb,
      group: ref.apiGroup ?? "",
      resource: ref.resource ?? "",
      subresource: ref.subresource ?? "",
      namespace: ref.namespace ?? "",
      name: ref.name ?? e.responseObject?.metadata?.name ?? "",
      code,
      user: e.user?.username ?? "",
      userAgent: e.userAgent ?? "",
      resourceVersion: e.responseObject?.metadata?.resourceVersion ?? "",
      stageMs: Date.parse(e.stageTimestamp),
      receivedMs: Date.parse(e.requestReceivedTimestamp),
      newestManager:
        ((e.responseObject?.metadata?.managedFields ?? []) as { manager: string; time?: string }[]).reduce(
          (best: { manager: string; time?: string } | undefined, f) => (!best || (f.time ?? "") > (best.time ?? "") ? f : best),
          undefined,
        )?.manager ?? "",
    });
  }
  return out;
}
