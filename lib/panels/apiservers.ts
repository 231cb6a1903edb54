/** The API servers the selector offers: the configured roles, or every job exposing apiserver_request_total. */
import type { PromClient } from "../promql/types";

export interface ApiServerEntry {
  job: string;
  role: "project" | "hub" | "discovered";
}

export function configuredApiservers(config: { project: string[]; hub: string[] }): ApiServerEntry[] {
  return [...config.project.map((job): ApiServerEntry => ({ job, role: "project" })), ...config.hub.map((job): ApiServerEntry => ({ job, role: "hub" }))];
}

/**
 * The API servers to offer, and a warning when Prometheus holds no apiserver_request_total for them
 * in the range (every Write load panel reads it): a page of "No data" then says why, once, at the top.
 */
export async function listApiservers(
  client: PromClient,
  config: { project: string[]; hub: string[] },
  bounds: { startSeconds: number; endSeconds: number },
  signal?: AbortSignal,
): Promise<{ data: ApiServerEntry[]; warnings: string[]; infos: string[] }> {
  const configured = configuredApiservers(config);
  const result = await client.labelValues("job", ["apiserver_request_total"], bounds, signal);
  const seen = new Set(result.data);
  if (configured.length > 0) {
    const missing = configured.filter((a) => !seen.has(a.job)).map((a) => a.job);
    const warning =
      missing.length === 0
        ? []
        : [
            `Prometheus has no apiserver_request_total in this range for ${missing.join(", ")} (the jobs configured in apiservers): the panels read it, so they show no data for ${missing.length === 1 ? "it" : "them"}. ${seen.size > 0 ? `It has it for ${[...seen].sort().slice(0, 5).join(", ")}${seen.size > 5 ? ", …" : ""}.` : "Check that it scrapes the API servers' /metrics under that job."}`,
          ];
    return { data: configured, warnings: [...warning, ...result.warnings], infos: result.infos };
  }
  const warning =
    seen.size === 0
      ? [
          "Prometheus has no apiserver_request_total in this range under any job: every panel on this page reads it. Check that it scrapes the API servers' /metrics.",
        ]
      : [];
  return {
    data: [...seen].sort().map((job) => ({ job, role: "discovered" })),
    warnings: [...warning, ...result.warnings],
    infos: result.infos,
  };
}
