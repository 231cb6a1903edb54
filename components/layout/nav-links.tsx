"use client";
/** Page links that keep the open snapshot and the range, so moving between pages shows the same moment. */
import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";

const PAGES = [
  { href: "/", label: "Write load" },
  { href: "/rebuilds", label: "Edge rebuilds" },
  { href: "/objects", label: "Objects" },
  { href: "/fields", label: "Field churn" },
  { href: "/compare", label: "Compare" },
  { href: "/clients", label: "Clients" },
];

export function NavLinks() {
  const pathname = usePathname();
  const search = useSearchParams();
  const carried = new URLSearchParams();
  for (const key of ["snapshot", "from", "to"]) {
    const value = search.get(key);
    if (value !== null) carried.set(key, value);
  }
  const suffix = carried.size > 0 ? `?${carried}` : "";
  return (
    <nav className="flex flex-wrap gap-x-4 gap-y-1 text-sm text-[var(--muted)]">
      {/* No prefetching, here or on any link: a page prefetched is a server render, and on opening an
          alert link those renders would compete with the page's own panel queries. */}
      {PAGES.map((p) => (
        <Link
          prefetch={false}
          key={p.href}
          href={`${p.href}${suffix}`}
          aria-current={pathname === p.href || (p.href === "/objects" && pathname.startsWith("/objects/")) ? "page" : undefined}
          className="hover:text-[var(--fg)] aria-[current=page]:font-semibold aria-[current=page]:text-[var(--fg)]"
        >
          {p.label}
        </Link>
      ))}
    </nav>
  );
}
