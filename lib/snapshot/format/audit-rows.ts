/** Audit requests in the bundle's compact form: each client and each object written listed once, each request pointing at them. */
import type { NoopEvidence } from "../../churn/preconditions";
import type { AuditRequests } from "./schema";

export interface AuditRow {
  tsMs: number;
  cluster: string;
  user: string;
  userAgent: string;
  /** the Kubernetes verb: create, update, patch, delete */
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** HTTP status; 0 when the log has none */
  code: number;
  /** whether the write changed nothing; null where it is not known */
  noop: boolean | null;
  /** what `noop` rests on; absent or null where it was not kept */
  evidence?: NoopEvidence | null;
}

export function packAuditRows(rows: Iterable<AuditRow>, note?: string): AuditRequests {
  const clients = new Map<string, number>();
  const targets = new Map<string, number>();
  const out: AuditRequests = { ...(note ? { note } : {}), clients: [], targets: [], requests: [] };
  for (const r of rows) {
    const clientKey = JSON.stringify([r.user, r.userAgent]);
    let c = clients.get(clientKey);
    if (c === undefined) {
      clients.set(clientKey, (c = out.clients.length));
      out.clients.push({ user: r.user, userAgent: r.userAgent });
    }
    const targetKey = JSON.stringify([r.cluster, r.group, r.resource, r.namespace, r.name]);
    let x = targets.get(targetKey);
    if (x === undefined) {
      targets.set(targetKey, (x = out.targets.length));
      out.targets.push({ cluster: r.cluster, group: r.group, resource: r.resource, namespace: r.namespace, name: r.name });
    }
    out.requests.push({
      t: r.tsMs,
      c,
      x,
      verb: r.verb,
      ...(r.subresource ? { sub: r.subresource } : {}),
      code: r.code,
      ...(r.noop === null ? {} : { noop: r.noop }),
      ...(r.noop === null || !r.evidence ? {} : { ev: r.evidence }),
    });
  }
  return out;
}
