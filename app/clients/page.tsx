import { connection } from "next/server";
import { Suspense } from "react";
import { ClientsView } from "@/components/clients/clients-view";

/** Clients reads the live store's audit requests (snapshots do not carry them). */
export default async function ClientsPage() {
  await connection();
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <ClientsView initialNowMs={Date.now()} />
    </Suspense>
  );
}
