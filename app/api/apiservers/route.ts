import type { NextRequest } from "next/server";
import { notConfigured } from "@/lib/api/not-configured";
import { respond } from "@/lib/api/respond";
import { listApiservers } from "@/lib/panels/apiservers";
import { parsePanelParams } from "@/lib/panels/params";
import { getServerContext } from "@/lib/server/context";

export async function GET(request: NextRequest) {
  return respond(async () => {
    const { config, prometheus, snapshots } = getServerContext();
    const params = Object.fromEntries(request.nextUrl.searchParams);
    if (params.snapshot !== undefined) return { data: (await snapshots.open(params.snapshot)).apiservers };
    const { startMs, endMs } = parsePanelParams(params, Date.now(), config.limits.maxRangeMs, []);
    if (!prometheus) throw notConfigured();
    const bounds = { startSeconds: Math.floor(startMs / 1000), endSeconds: Math.ceil(endMs / 1000) };
    return listApiservers(prometheus.client, config.apiservers, bounds, request.signal);
  });
}
