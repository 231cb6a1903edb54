import type { Metadata } from "next";
import Link from "next/link";
import { Suspense, type ReactNode } from "react";
import { NavLinks } from "@/components/layout/nav-links";
import "./globals.css";
import { Providers } from "./providers";

export const metadata: Metadata = {
  title: "Churnscope",
  description: "Kubernetes control-plane write load",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen">
        <Providers>
          <header className="flex items-center gap-6 border-b border-[var(--border)] bg-[var(--panel)] px-4 py-2">
            <Link prefetch={false} href="/" className="font-semibold tracking-tight">
              Churnscope
            </Link>
            <Suspense fallback={null}>
              <NavLinks />
            </Suspense>
          </header>
          {children}
        </Providers>
      </body>
    </html>
  );
}
