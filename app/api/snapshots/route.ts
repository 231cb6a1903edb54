import type { NextRequest } from "next/server";
import { readBodyLimited } from "@/lib/api/read-body";
import { respond } from "@/lib/api/respond";
import { info } from "@/lib/snapshot/lookup";
import { getServerContext } from "@/lib/server/context";

/** Upload a snapshot bundle (.json.gz or .json as the raw body); answers its id and what it holds. */
export async function POST(request: NextRequest) {
  return respond(async () => {
    const { snapshots } = getServerContext();
    const bytes = await readBodyLimited(request.body, snapshots.maxBytes);
    const { id, snapshot } = snapshots.put(bytes);
    return { data: info(snapshot, id) };
  });
}
