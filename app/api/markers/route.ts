import type { NextRequest } from "next/server";
import { respond } from "@/lib/api/respond";
import { answerMarkers } from "@/lib/server/handlers/markers";
import { getServerContext } from "@/lib/server/context";

/** Every marker in a range: configured releases, PromQL-found changes and notes (or a snapshot's). */
export async function GET(request: NextRequest) {
  return respond(() => answerMarkers(getServerContext(), Object.fromEntries(request.nextUrl.searchParams), request.signal));
}
