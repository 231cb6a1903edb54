"use client";
/**
 * The one React-aware module in lib/: query keys and hooks for our JSON API. Every input is in
 * the key, so a new range or resource fetches, and old data stays on screen while it does.
 */
import { keepPreviousData, QueryClient, useQuery } from "@tanstack/react-query";
import type { ApiServerEntry } from "../panels/apiservers";
import type { PanelData } from "../panels/run-panel";
import type { Marker } from "../markers/marker";
import { ApiClientError, fetchEnvelope } from "../api/fetch-envelope";

export interface PanelQueryInput {
  panel: string;
  startMs: number;
  endMs: number;
  apiserver?: string;
  resource?: string;
  width: number;
  /** answer from this snapshot instead of Prometheus */
  snapshot?: string;
  /** further parameters of panels that take them (the compare view's a, b and window) */
  args?: Record<string, string>;
}

export const queryKeys = {
  panel: (input: PanelQueryInput) => ["panel", input] as const,
  apiservers: (startMs: number, endMs: number) => ["apiservers", startMs, endMs] as const,
  markers: (startMs: number, endMs: number, snapshot?: string) => ["markers", startMs, endMs, snapshot ?? ""] as const,
};

function search(params: Record<string, string | number | undefined>): string {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== "") out.set(key, String(value));
  return out.toString();
}

export function usePanel(input: PanelQueryInput, enabled = true) {
  return useQuery({
    queryKey: queryKeys.panel(input),
    queryFn: ({ signal }) =>
      fetchEnvelope<PanelData>(
        `/api/panels/${encodeURIComponent(input.panel)}?${search({
          from: input.startMs,
          to: input.endMs,
          apiserver: input.apiserver,
          resource: input.resource,
          width: input.width,
          snapshot: input.snapshot,
          ...input.args,
        })}`,
        signal,
      ),
    placeholderData: keepPreviousData,
    enabled,
  });
}

/** Every marker of a range (releases, PromQL-found changes, notes), or the snapshot's own. */
export function useMarkers(startMs: number, endMs: number, snapshot?: string) {
  return useQuery({
    queryKey: queryKeys.markers(startMs, endMs, snapshot),
    queryFn: ({ signal }) => fetchEnvelope<Marker[]>(`/api/markers?${search({ from: startMs, to: endMs, snapshot })}`, signal),
    placeholderData: keepPreviousData,
  });
}

export function useApiservers(startMs: number, endMs: number, enabled = true) {
  return useQuery({
    enabled,
    queryKey: queryKeys.apiservers(startMs, endMs),
    queryFn: ({ signal }) => fetchEnvelope<ApiServerEntry[]>(`/api/apiservers?${search({ from: startMs, to: endMs })}`, signal),
    placeholderData: keepPreviousData,
    staleTime: 5 * 60_000,
  });
}

export const isBusy = (error: unknown) => error instanceof ApiClientError && error.errorType === "busy";

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 30_000,
        refetchOnWindowFocus: false,
        // "busy" means Churnscope is holding back queries to Prometheus: wait and ask again, a few times.
        retry: (failures, error) => failures < (isBusy(error) ? 5 : 1),
        retryDelay: (failures, error) => (isBusy(error) ? 2_000 * 2 ** failures + Math.random() * 1_000 : 1_000),
      },
    },
  });
}

/** Any of our JSON endpoints by URL: the URL is the key, old data stays while a new one loads. */
export function useApi<T>(url: string | null) {
  return useQuery({
    queryKey: ["api", url],
    queryFn: ({ signal }) => fetchEnvelope<T>(url as string, signal),
    placeholderData: keepPreviousData,
    enabled: url !== null,
  });
}

export function apiUrl(path: string, params: Record<string, string | number | undefined>): string {
  const query = search(params);
  return query ? `${path}?${query}` : path;
}
