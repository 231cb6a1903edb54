"use client";
import { useEffect, useRef, useState } from "react";

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

/**
 * Points to ask for per chart: about one per pixel, rounded to 100 so small layout changes do not
 * refetch; half the page for side-by-side charts on wide screens. 0 until the page is measured, so
 * nothing is asked for at a width that is about to change.
 */
export function chartWidths(pageWidth: number): { full: number; half: number } {
  if (pageWidth <= 0) return { full: 0, half: 0 };
  const full = Math.max(100, Math.round(pageWidth / 100) * 100);
  return { full, half: pageWidth >= 1024 ? Math.max(100, Math.round(pageWidth / 2 / 100) * 100) : full };
}
