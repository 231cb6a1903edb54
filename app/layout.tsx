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
          {/* The first stop for the keyboard: past the page links to the page itself. */}
          <a
            href="#content"
            className="sr-only rounded bg-[var(--panel)] px-3 py-2 text-sm focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:outline focus:outline-2 focus:outline-[var(--accent)]"
          >
            Skip to content
          </a>
          <header className="flex flex-wrap items-center gap-x-6 gap-y-1 border-b border-[var(--border)] bg-[var(--panel)] px-4 py-2">
            <Link prefetch={false} href="/" className="font-semibold tracking-tight">
              Churnscope
            </Link>
            <Suspense fallback={null}>
              <NavLinks />
            </Suspense>
          </header>
          <div id="content" tabIndex={-1} className="outline-none">
            {children}
          </div>
        </Providers>
      </body>
    </html>
  );
}
