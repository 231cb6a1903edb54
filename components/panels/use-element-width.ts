"use client";
import { useEffect, useRef, useState } from "react";
import { WIDTH_COOKIE } from "@/lib/panels/panel-url";

/** Width of an element in CSS pixels, kept current with a ResizeObserver. 0 until measured. */
export function useElementWidth<T extends HTMLElement>() {
  const ref = useRef<T | null>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    // The observer reports the laid-out width once observing starts and on every change; measuring
    // here as well would catch a width from before layout settles and query twice.
    const observer = new ResizeObserver((entries) => setWidth(Math.floor(entries[0].contentRect.width)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

/** Remembers the measured page width for the next page load (the server preloads at it; see app/page.tsx). */
export function useWidthCookie(pageWidth: number): void {
  useEffect(() => {
    if (pageWidth > 0) document.cookie = `${WIDTH_COOKIE}=${pageWidth}; path=/; max-age=31536000; samesite=lax`;
  }, [pageWidth]);
}
