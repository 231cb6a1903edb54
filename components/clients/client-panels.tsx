"use client";
/**
 * The components' own count of their API calls (client-go's rest_client_* metrics, per scrape target) and API Priority
 * and Fairness per flow schema, from Prometheus: a component's calls show here whether or not an audit log is kept.
 */
import { PanelCard } from "@/components/write-load/panel-card";
import { useElementWidth } from "@/components/panels/use-element-width";
import type { Marker } from "@/lib/markers/marker";
import { CLIENT_PANELS } from "@/lib/panels/client-panels";

const CHARTS = ["client-requests", "client-throttle", "apf-dispatched", "apf-rejected", "apf-queue-wait", "apf-seats"];

export function ClientPanels({ startMs, endMs, markers, snapshot }: { startMs: number; endMs: number; markers: Marker[]; snapshot?: string }) {
  const [ref, width] = useElementWidth<HTMLDivElement>();
  // Two charts a row from a laptop's width on: each half the grid less its gap.
  const chartWidth = width >= 1024 ? Math.floor((width - 12) / 2) : width;
  return (
    <section data-testid="client-panels" className="space-y-2">
      <h2 className="text-sm font-semibold">The components&apos; own count, and API Priority and Fairness (Prometheus)</h2>
      <p className="text-xs text-[var(--muted)]">
        client-go counts every call a component makes (rest_client_requests_total, per scrape target: GET covers get, list and watch); the API servers count
        what API Priority and Fairness let through and rejected per flow schema. The audit log&apos;s count above is per user agent; where both exist they
        should agree.
      </p>
      <div ref={ref} className="grid gap-3 lg:grid-cols-2">
        {CHARTS.map((id) => (
          <PanelCard key={id} def={CLIENT_PANELS.find((p) => p.id === id)!} input={{ startMs, endMs, width: chartWidth, snapshot }} markers={markers} />
        ))}
      </div>
    </section>
  );
}
