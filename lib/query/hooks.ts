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
import { apiserversUrl, changesUrl, markersUrl, panelUrl, searchOf, type PanelQueryInput } from "../panels/panel-url";
import type { ChangesAnswer } from "../wire/changes";

export type { PanelQueryInput };

export const queryKeys = {
  panel: (input: PanelQueryInput) => ["panel", input] as const,
  apiservers: (startMs: number, endMs: number) => ["apiservers", startMs, endMs] as const,
  markers: (startMs: number, endMs: number, snapshot?: string) => ["markers", startMs, endMs, snapshot ?? ""] as const,
  changes: (startMs: number, endMs: number, onsetMs?: number, snapshot?: string) => ["changes", startMs, endMs, onsetMs ?? "", snapshot ?? ""] as const,
};

export function usePanel(input: PanelQueryInput, enabled = true) {
  return useQuery({
    queryKey: queryKeys.panel(input),
    queryFn: ({ signal }) => fetchEnvelope<PanelData>(panelUrl(input), signal),
    placeholderData: keepPreviousData,
    enabled,
  });
}

/** Every marker of a range (releases, PromQL-found changes, notes), or the snapshot's own. */
export function useMarkers(startMs: number, endMs: number, snapshot?: string) {
  return useQuery({
    queryKey: queryKeys.markers(startMs, endMs, snapshot),
    queryFn: ({ signal }) => fetchEnvelope<Marker[]>(markersUrl(startMs, endMs, snapshot), signal),
    placeholderData: keepPreviousData,
  });
}

/** The range's recorded changes, each tested against its writers' rates at the onset (analysis/why.ts). */
export function useChanges(startMs: number, endMs: number, onsetMs?: number, snapshot?: string) {
  return useQuery({
    queryKey: queryKeys.changes(startMs, endMs, onsetMs, snapshot),
    queryFn: ({ signal }) => fetchEnvelope<ChangesAnswer>(changesUrl(startMs, endMs, onsetMs, snapshot), signal),
    placeholderData: keepPreviousData,
  });
}

export function useApiservers(startMs: number, endMs: number, enabled = true) {
  return useQuery({
    enabled,
    queryKey: queryKeys.apiservers(startMs, endMs),
    queryFn: ({ signal }) => fetchEnvelope<ApiServerEntry[]>(apiserversUrl(startMs, endMs), signal),
    placeholderData: keepPreviousData,
    staleTime: 5 * 60_000,
  });
}

export const isBusy = (error: unknown) => error instanceof ApiClientError && error.errorType === "busy";
const isRefusal = (error: unknown) => error instanceof ApiClientError && error.httpStatus !== undefined && error.httpStatus >= 400 && error.httpStatus < 500;

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 30_000,
        refetchOnWindowFocus: false,
        // "busy" means Churnscope is holding back queries to Prometheus: wait and ask again, a few times.
        // Any other refusal (4xx) gives the same answer again, so it is shown at once.
        retry: (failures, error) => (isBusy(error) ? failures < 5 : !isRefusal(error) && failures < 1),
        retryDelay: (failures, error) => (isBusy(error) ? 2_000 * 2 ** failures + Math.random() * 1_000 : 1_000),
      },
    },
  });
}

/** Any of our JSON endpoints by URL: the URL is the key, old data stays while a new one loads. */
/** `refetchMs`: asked again that often while the page is open (a status that changes on its own). */
export function useApi<T>(url: string | null, { refetchMs }: { refetchMs?: number } = {}) {
  return useQuery({
    queryKey: ["api", url],
    queryFn: ({ signal }) => fetchEnvelope<T>(url as string, signal),
    placeholderData: keepPreviousData,
    enabled: url !== null,
    ...(refetchMs ? { refetchInterval: refetchMs } : {}),
  });
}

export function apiUrl(path: string, params: Record<string, string | number | undefined>): string {
  const query = searchOf(params);
  return query ? `${path}?${query}` : path;
}
