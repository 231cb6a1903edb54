import { serverMetrics } from "@/lib/server/metrics";
import { getServerContext } from "@/lib/server/context";

/** The dashboard's own metrics: its Prometheus query sharing, and the in-process recorder's families when it runs. */
export async function GET() {
  const headers = { "Content-Type": "text/plain; version=0.0.4", "Cache-Control": "no-store" };
  try {
    return new Response(await serverMetrics(getServerContext()), { headers });
  } catch (error) {
    // The store's families could not be read (its database unreachable): a scrape that fails says so.
    return new Response(`# the store could not be read: ${(error as Error).message.split("\n")[0]}\n`, { status: 503, headers });
  }
}
