import { liveStore } from "@/lib/objects/sources";
import { recorderMetrics } from "@/lib/recorder/recorder";
import { getServerContext } from "@/lib/server/context";
import { runningRecorder } from "@/lib/server/recording";

/** The in-process recorder's metrics (the same families `npm run recorder` serves). */
export async function GET() {
  const recorder = runningRecorder();
  const body = recorder ? recorderMetrics(recorder, liveStore(getServerContext())) : "# no recorder runs in this process\n";
  return new Response(body, { headers: { "Content-Type": "text/plain; version=0.0.4", "Cache-Control": "no-store" } });
}
