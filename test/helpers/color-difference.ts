/**
 * How far apart two drawn colours are, read independently of the product's own measure (OKLab): CIELAB's ΔE*ab (1976)
 * under D65, for normal vision and each dichromacy as the product simulates it. Colours the product tells apart keep
 * ΔE ≥ 14 in every simulation on its palette; near-identical pairs (#a16207 and #c2410c to a deuteranope: 2.6) fall far under.
 */
import { DICHROMACIES, rgbOf, seen, type Rgb } from "@/lib/panels/color-vision";

function lab([r, g, b]: Rgb): Rgb {
  const x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
  const y = 0.2126729 * r + 0.7151522 * g + 0.072175 * b;
  const z = (0.0193339 * r + 0.119192 * g + 0.9503041 * b) / 1.08883;
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

/** The smallest ΔE*ab between two CSS colours (#rrggbb or rgb(r, g, b)) over normal vision and the three dichromacies. */
export function leastDeltaE(a: string, b: string): number {
  const [ca, cb] = [rgbOf(hexOf(a)), rgbOf(hexOf(b))];
  return Math.min(
    ...[null, ...DICHROMACIES].map((m) => {
      const [la, lb] = [lab(seen(ca, m)), lab(seen(cb, m))];
      return Math.hypot(la[0] - lb[0], la[1] - lb[1], la[2] - lb[2]);
    }),
  );
}

/** A browser's computed colour ("rgb(59, 130, 246)") or a hex colour, as #rrggbb. */
export function hexOf(css: string): string {
  const rgb = /^rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(css.trim());
  if (!rgb) return css.trim().toLowerCase();
  return `#${rgb
    .slice(1, 4)
    .map((v) => Number(v).toString(16).padStart(2, "0"))
    .join("")}`;
}
