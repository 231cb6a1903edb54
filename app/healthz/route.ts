/** Liveness: the process answers. Nothing else is checked, so a slow Prometheus never restarts the pod. */
export function GET() {
  return new Response("ok\n", { headers: { "Content-Type": "text/plain", "Cache-Control": "no-store" } });
}
