"use client";
import { useSyncExternalStore } from "react";

export interface ThemeColors {
  grid: string;
  muted: string;
  fg: string;
  panel: string;
  accent: string;
}

const LIGHT: ThemeColors = { grid: "#e8ebf0", muted: "#5b6472", fg: "#1b1f24", panel: "#ffffff", accent: "#2563eb" };

/** The colours the page's CSS variables give now, read once per colour scheme (each read makes the browser compute styles). */
let current: ThemeColors | undefined;

function read(): ThemeColors {
  if (current) return current;
  const style = getComputedStyle(document.documentElement);
  const v = (name: keyof ThemeColors) => style.getPropertyValue(`--${name}`).trim() || LIGHT[name];
  const colors: ThemeColors = { grid: v("grid"), muted: v("muted"), fg: v("fg"), panel: v("panel"), accent: v("accent") };
  // The same object while they are the light ones: a chart rendered with them does not render again.
  current = (Object.keys(LIGHT) as (keyof ThemeColors)[]).every((name) => colors[name] === LIGHT[name]) ? LIGHT : colors;
  return current;
}

function subscribe(changed: () => void): () => void {
  const media = window.matchMedia("(prefers-color-scheme: dark)");
  const onChange = () => {
    current = undefined;
    changed();
  };
  media.addEventListener("change", onChange);
  return () => media.removeEventListener("change", onChange);
}

/**
 * Chart colours read from the CSS variables, so strokes follow light and dark mode: one read for every chart, and
 * a chart mounted after the page hydrated renders with them at once, not first with the light ones and then again.
 */
export function useThemeColors(): ThemeColors {
  return useSyncExternalStore(subscribe, read, () => LIGHT);
}
