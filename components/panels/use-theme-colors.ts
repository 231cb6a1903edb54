"use client";
import { useEffect, useState } from "react";

export interface ThemeColors {
  grid: string;
  muted: string;
  fg: string;
  panel: string;
  accent: string;
}

const LIGHT: ThemeColors = { grid: "#e8ebf0", muted: "#5b6472", fg: "#1b1f24", panel: "#ffffff", accent: "#2563eb" };

/** Chart colours read from the CSS variables, so SVG strokes follow light and dark mode. */
export function useThemeColors(): ThemeColors {
  const [colors, setColors] = useState<ThemeColors>(LIGHT);
  useEffect(() => {
    const read = () => {
      const style = getComputedStyle(document.documentElement);
      const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
      setColors({
        grid: v("--grid", LIGHT.grid),
        muted: v("--muted", LIGHT.muted),
        fg: v("--fg", LIGHT.fg),
        panel: v("--panel", LIGHT.panel),
        accent: v("--accent", LIGHT.accent),
      });
    };
    read();
    const media = window.matchMedia("(prefers-color-scheme: dark)");
    media.addEventListener("change", read);
    return () => media.removeEventListener("change", read);
  }, []);
  return colors;
}
