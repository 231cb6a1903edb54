/**
 * Whether two series colours can be told apart, by people with normal colour vision and with each of the three
 * dichromacies: each colour is simulated for protanopia, deuteranopia and tritanopia (Machado, Oliveira and Fernandes
 * 2009, full severity, in linear sRGB) and the pair compared in OKLab, where a distance reads alike across hues.
 */

export type Rgb = readonly [number, number, number];
type Matrix = readonly [Rgb, Rgb, Rgb];

/** Protanopia, deuteranopia and tritanopia: each a matrix over linear sRGB. */
export const DICHROMACIES: readonly Matrix[] = [
  [
    [0.152286, 1.052583, -0.204868],
    [0.114503, 0.786281, 0.099216],
    [-0.003882, -0.048116, 1.051998],
  ],
  [
    [0.367322, 0.860646, -0.227968],
    [0.280085, 0.672501, 0.047413],
    [-0.01182, 0.04294, 0.968881],
  ],
  [
    [1.255528, -0.076749, -0.178779],
    [-0.078411, 0.930809, 0.147602],
    [0.004733, 0.691367, 0.3039],
  ],
];
const SIMULATIONS: readonly (Matrix | null)[] = [null, ...DICHROMACIES];

/** The OKLab distance two colours of one chart keep in every simulation: lines this far apart are not mistaken. */
export const APART = 0.1;

export const linear = (channel: number) => {
  const c = channel / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};

/** A `#rrggbb` colour in linear sRGB. */
export function rgbOf(hex: string): Rgb {
  const n = Number.parseInt(hex.slice(1), 16);
  return [linear((n >> 16) & 255), linear((n >> 8) & 255), linear(n & 255)];
}

const clamp = (v: number) => Math.min(1, Math.max(0, v));
const times = (row: Rgb, c: Rgb) => clamp(row[0] * c[0] + row[1] * c[1] + row[2] * c[2]);
/** The colour as someone with the dichromacy `m` sees it (null: normal vision). */
export const seen = (c: Rgb, m: Matrix | null): Rgb => (m ? [times(m[0], c), times(m[1], c), times(m[2], c)] : c);

function oklab([r, g, b]: Rgb): Rgb {
  const l = Math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const m = Math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const s = Math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  return [
    0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s,
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s,
  ];
}

/** The smallest OKLab distance between two `#rrggbb` colours over normal vision and the three simulations. */
export function leastDistance(a: string, b: string): number {
  const [ca, cb] = [rgbOf(a), rgbOf(b)];
  return Math.min(
    ...SIMULATIONS.map((m) => {
      const [pa, pb] = [oklab(seen(ca, m)), oklab(seen(cb, m))];
      return Math.hypot(pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]);
    }),
  );
}

export const apart = (a: string, b: string) => leastDistance(a, b) >= APART;
