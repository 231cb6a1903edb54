import { readiness } from "@/lib/server/readiness";

/** Readiness: the configuration is valid and the data directory is writable (Prometheus being down is shown on the panels, not here). */
export async function GET() {
  const { ready, checks } = await readiness();
  return Response.json({ ready, checks }, { status: ready ? 200 : 503, headers: { "Cache-Control": "no-store" } });
}
