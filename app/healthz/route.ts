import { liveness } from "@/lib/server/context";

/** Liveness: the process answers and its Prometheus query pool makes progress; a slow Prometheus never restarts the pod. */
export function GET() {
  const { live, reason } = liveness();
  return new Response(live ? "ok\n" : `stuck: ${reason}\n`, {
    status: live ? 200 : 503,
    headers: { "Content-Type": "text/plain", "Cache-Control": "no-store" },
  });
}
