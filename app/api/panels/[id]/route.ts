import type { NextRequest } from "next/server";
import { notFound } from "@/lib/api/envelope";
import { notConfigured } from "@/lib/api/not-configured";
import { respond } from "@/lib/api/respond";
import { findPanel } from "@/lib/panels/catalog";
import { configuredApiservers } from "@/lib/panels/apiservers";
import { parsePanelParams } from "@/lib/panels/params";
import { runPanel } from "@/lib/panels/run-panel";
import { getServerContext } from "@/lib/server/context";

export async function GET(request: NextRequest, ctx: { params: Promise<{ id: string }> }) {
  const { id } = await ctx.params;
  return respond(async () => {
    const panel = findPanel(id);
    if (!panel) throw notFound(`unknown panel "${id.slice(0, 80)}"`);
    const { config, prometheus } = getServerContext();
    const req = parsePanelParams(
      Object.fromEntries(request.nextUrl.searchParams),
      Date.now(),
      config.limits.maxRangeMs,
      configuredApiservers(config.apiservers).map((a) => a.job),
    );
    if (!prometheus) throw notConfigured();
    return runPanel(prometheus, panel, req, request.signal);
  });
}
