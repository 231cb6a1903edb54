import { connection } from "next/server";
import { Suspense } from "react";
import { NotConfigured } from "@/components/setup/not-configured";
import { WriteLoadView } from "@/components/write-load/write-load-view";
import { configuredApiservers } from "@/lib/panels/apiservers";
import { getServerContext } from "@/lib/server/context";

export default async function WriteLoadPage() {
  // Read configuration at request time, never at build time.
  await connection();
  const { config } = getServerContext();
  if (!config.prometheus) return <NotConfigured configSource={config.source} />;
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <WriteLoadView initialNowMs={Date.now()} configuredApiservers={configuredApiservers(config.apiservers)} />
    </Suspense>
  );
}
