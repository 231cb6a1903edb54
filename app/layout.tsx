import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
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
            <Link href="/" className="font-semibold tracking-tight">
              Churnscope
            </Link>
            <nav className="flex gap-4 text-sm text-[var(--muted)]">
              <Link href="/" className="hover:text-[var(--fg)]">
                Write load
              </Link>
            </nav>
          </header>
          {children}
        </Providers>
      </body>
    </html>
  );
}
