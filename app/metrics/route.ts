import { serverMetrics } from "@/lib/server/metrics";
import { getServerContext } from "@/lib/server/context";

/** The dashboard's own metrics: its Prometheus query sharing, and the in-process recorder's families when it runs. */
export async function GET() {
  return new Response(serverMetrics(getServerContext()), { headers: { "Content-Type": "text/plain; version=0.0.4", "Cache-Control": "no-store" } });
}
