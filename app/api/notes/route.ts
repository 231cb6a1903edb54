import type { NextRequest } from "next/server";
import { respond } from "@/lib/api/respond";
import { addNote } from "@/lib/server/handlers/markers";
import { getServerContext } from "@/lib/server/context";

/** Add a note: {"timeMs": …, "text": "…"}; the author comes from the configured auth header. */
export async function POST(request: NextRequest) {
  return respond(() => addNote(getServerContext(), request.body, request.headers));
}
