/** The API servers the selector offers: the configured roles, or every job exposing apiserver_request_total. */
import type { PromClient } from "../promql/types";

export interface ApiServerEntry {
  job: string;
  role: "project" | "hub" | "discovered";
}

export function configuredApiservers(config: { project: string[]; hub: string[] }): ApiServerEntry[] {
  return [...config.project.map((job): ApiServerEntry => ({ job, role: "project" })), ...config.hub.map((job): ApiServerEntry => ({ job, role: "hub" }))];
}

export async function listApiservers(
  client: PromClient,
  config: { project: string[]; hub: string[] },
  bounds: { startSeconds: number; endSeconds: number },
  signal?: AbortSignal,
): Promise<{ data: ApiServerEntry[]; warnings: string[]; infos: string[] }> {
  const configured = configuredApiservers(config);
  if (configured.length > 0) return { data: configured, warnings: [], infos: [] };
  const result = await client.labelValues("job", ["apiserver_request_total"], bounds, signal);
  return {
    data: [...result.data].sort().map((job) => ({ job, role: "discovered" })),
    warnings: result.warnings,
    infos: result.infos,
  };
}
