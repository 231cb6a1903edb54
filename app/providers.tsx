"use client";
import { QueryClientProvider } from "@tanstack/react-query";
import { NuqsAdapter } from "nuqs/adapters/next/app";
import { useState, type ReactNode } from "react";
import { makeQueryClient } from "@/lib/query/hooks";

export function Providers({ children }: { children: ReactNode }) {
  // One client per browser tab; a fresh one per server render.
  const [client] = useState(makeQueryClient);
  return (
    <NuqsAdapter>
      <QueryClientProvider client={client}>{children}</QueryClientProvider>
    </NuqsAdapter>
  );
}
