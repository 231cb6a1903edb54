/**
 * The URLs of a page's requests. The browser's fetch and the server's preload of the same request
 * build them here, so the two are byte-for-byte equal and the browser uses the preloaded answer.
 */
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

export function searchOf(params: Record<string, string | number | undefined>): string {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== "") out.set(key, String(value));
  return out.toString();
}

export function panelUrl(input: PanelQueryInput): string {
  const { panel, startMs, endMs, apiserver, resource, width, snapshot, args } = input;
  return `/api/panels/${encodeURIComponent(panel)}?${searchOf({ from: startMs, to: endMs, apiserver, resource, width, snapshot, ...args })}`;
}

/** The markers of a range (releases, PromQL-found changes, notes), or a snapshot's own. */
export function markersUrl(startMs: number, endMs: number, snapshot?: string): string {
  return `/api/markers?${searchOf({ from: startMs, to: endMs, snapshot })}`;
}

/** The recorded changes of a range tested against the writers' rates at the onset (the chart's, when it has one). */
export function changesUrl(startMs: number, endMs: number, onsetMs?: number, snapshot?: string): string {
  return `/api/changes?${searchOf({ from: startMs, to: endMs, onset: onsetMs, snapshot })}`;
}

/** The API servers to choose from in a range. */
export function apiserversUrl(startMs: number, endMs: number): string {
  return `/api/apiservers?${searchOf({ from: startMs, to: endMs })}`;
}

export interface ChartWidths {
  full: number;
  half: number;
}

/**
 * Points to ask for per chart: about one per pixel, rounded to 100 so small layout changes do not
 * refetch; half the page for side-by-side charts on wide screens. 0 until the page is measured, so
 * nothing is asked for at a width that is about to change. Self-contained on purpose: the preload
 * script carries its source to the browser (see preload-script.ts).
 */
export function chartWidths(pageWidth: number): ChartWidths {
  if (pageWidth <= 0) return { full: 0, half: 0 };
  const full = Math.max(100, Math.round(pageWidth / 100) * 100);
  return { full, half: pageWidth >= 1024 ? Math.max(100, Math.round(pageWidth / 2 / 100) * 100) : full };
}

/** The widths a preload template names until the page is measured: never real ones, which are at least 100 (see preload-script.ts). */
export const WIDTH_SLOTS: ChartWidths = { full: -1, half: -2 };

/** The cookie that tells the server the page's last measured width, so it can preload the panel requests the page will send. */
export const WIDTH_COOKIE = "churnscope_width";

/** The cookie's width, or null when absent or not a plausible page width. */
export function widthFromCookie(value: string | undefined): number | null {
  if (value === undefined || !/^\d{1,5}$/.test(value)) return null;
  const width = Number(value);
  return width >= 100 && width <= 20_000 ? width : null;
}

/** The Clients answer for a view: what Clients asks for, and what its page preloads with the HTML. */
export function clientsUrl(view: { startMs: number; endMs: number; cluster?: string; resource?: string; atMs?: number; snapshot?: string }): string {
  return `/api/clients?${searchOf({ from: view.startMs, to: view.endMs, cluster: view.cluster, resource: view.resource, at: view.atMs, snapshot: view.snapshot })}`;
}

/** A view's before/after time, where it is one inside the range (else the page says so and compares nothing). */
export const atInside = (atMs: number | undefined, range: { startMs: number; endMs: number }) =>
  atMs !== undefined && atMs > range.startMs && atMs < range.endMs ? atMs : undefined;
