import { connection } from "next/server";
import { Suspense } from "react";
import { ClientsView } from "@/components/clients/clients-view";
import type { Search } from "@/lib/server/page-snapshot";

/** Clients reads the live store's audit requests; snapshots do not carry them, so a snapshot link says so. */
export default async function ClientsPage({ searchParams }: { searchParams: Promise<Search> }) {
  await connection();
  const fromSnapshot = typeof (await searchParams).snapshot === "string";
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <ClientsView initialNowMs={Date.now()} fromSnapshot={fromSnapshot} />
    </Suspense>
  );
}
