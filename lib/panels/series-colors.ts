/**
 * A colour per series name, the same on every chart and page: "connectors.networking.datumapis.com" is one
 * colour in Writes by resource, Compare and the Clients chart alike. A name keeps the colour it was first
 * given; that is the one its hash points at unless another name holds it, so most names get the same colour
 * in every session too. Two names share a colour only once more names are seen than there are colours.
 */

/** Distinct in light and dark mode. */
export const SERIES_COLORS = [
  "#3b82f6",
  "#f97316",
  "#10b981",
  "#e11d48",
  "#8b5cf6",
  "#eab308",
  "#06b6d4",
  "#db2777",
  "#65a30d",
  "#a16207",
  "#1e40af",
  "#fb7185",
  "#047857",
  "#c2410c",
  "#c084fc",
  "#0e7490",
  "#facc15",
  "#9d174d",
  "#a3e635",
  "#6d28d9",
];

/** "other" (the series folded together) and anything that is not one name. */
export const OTHER_COLOR = "#94a3b8";

/** FNV-1a over the name's UTF-16 code units: cheap, and spreads similar names apart. */
function hash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export class SeriesColors {
  private readonly byName = new Map<string, number>();
  private readonly order = new Map<string, number>();
  private readonly holder: (string | undefined)[];

  constructor(private readonly palette: readonly string[] = SERIES_COLORS) {
    this.holder = new Array<string | undefined>(palette.length);
  }

  /** The name's colour: given once, then the same every time it is asked. */
  colorOf(name: string): string {
    let slot = this.byName.get(name);
    if (slot === undefined) {
      const preferred = hash(name) % this.palette.length;
      slot = preferred;
      // The first free colour from the preferred one on; when every colour is held, the preferred one.
      for (let step = 0; step < this.palette.length; step++) {
        const candidate = (preferred + step) % this.palette.length;
        if (this.holder[candidate] === undefined) {
          slot = candidate;
          this.holder[candidate] = name;
          break;
        }
      }
      this.byName.set(name, slot);
      this.order.set(name, this.order.size);
    }
    return this.palette[slot];
  }

  /**
   * The colours of one chart's series, in order: each name's own colour, except where two series of this chart
   * share one (possible once more names are seen than there are colours). Then the name given that colour first
   * keeps it, whatever the chart's order, so it looks the same on every chart; the others take the first colours
   * the chart does not use yet, so one chart never draws two series alike while it can.
   */
  colorsOf(names: readonly string[]): string[] {
    const own = names.map((name) => this.colorOf(name));
    const keeper = new Map<string, number>();
    own.forEach((color, i) => {
      const held = keeper.get(color);
      if (held === undefined || this.seen(names[i]) < this.seen(names[held])) keeper.set(color, i);
    });
    const used = new Set(keeper.keys());
    return own.map((color, i) => {
      if (keeper.get(color) === i) return color;
      const free = this.palette.find((c) => !used.has(c)) ?? color;
      used.add(free);
      return free;
    });
  }

  /** When a name was first given its colour: the order of first sighting. */
  private seen(name: string): number {
    return this.order.get(name) ?? Infinity;
  }
}

/** The page's colours, shared by every chart in this browser tab (they outlive a page change). */
export const seriesColors = new SeriesColors();
