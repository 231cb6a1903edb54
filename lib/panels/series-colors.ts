/**
 * A colour per series name, the same on every chart and page: "connectors.networking.datumapis.com" is one
 * colour in Writes by resource, Compare and the Clients chart alike. A name is first given the colour its hash
 * points at unless another name holds it, so most names get the same colour in every session too. Once a tab has
 * seen more names than there are colours, two names can share one. When two names of one colour, or of colours
 * someone could mistake for each other (with normal or deficient colour vision), are drawn on one chart, the one seen
 * later moves to a colour told apart from all those it is drawn with (else, where it shared one, to one none of them
 * holds), on every chart at once (those already drawn are told), so a name never shows two colours, whichever
 * chart's answer came first.
 */

import { apart } from "./color-vision";

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

/** The colours at one moment, as a chart reads them. */
export interface ColorsNow {
  colorsOf(names: readonly string[]): string[];
}

export class SeriesColors {
  private readonly slotOf = new Map<string, number>();
  /** when each name was first given its colour: the order of first sighting */
  private readonly order = new Map<string, number>();
  /** how many names hold each colour */
  private readonly holders: number[];
  /** pairs of palette colours that someone, with normal or deficient colour vision, could mistake for each other */
  private readonly alike: boolean[][];
  /** the names each name has been drawn with on one chart */
  private readonly drawnWith = new Map<string, Set<string>>();
  private readonly listeners = new Set<() => void>();
  private now: ColorsNow = this.view();
  private telling = false;

  constructor(private readonly palette: readonly string[] = SERIES_COLORS) {
    this.holders = new Array<number>(palette.length).fill(0);
    this.alike = palette.map((a, i) => palette.map((b, j) => i === j || !apart(a, b)));
  }

  /** The name's colour: given once, the same every time it is asked until it has to move (see colorsOf). */
  colorOf(name: string): string {
    return this.palette[this.slot(name)];
  }

  /**
   * The colours of one chart's series, in order. Where two of them share a colour, the name seen later moves to one
   * that none of the names it has been drawn with holds, for every chart. Only when there is none (a name drawn
   * beside as many others as there are colours) does this chart alone give it the first colour it does not use yet,
   * so one chart never draws two series alike while it can.
   */
  colorsOf(names: readonly string[]): string[] {
    this.meet(names);
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

  /** The colours as they are now: a new value after each move, so a chart drawn before it knows to draw again. */
  snapshot = (): ColorsNow => this.now;

  /** `changed` runs after a name moves (after the current render, not inside it); answers the unsubscribe. */
  subscribe = (changed: () => void): (() => void) => {
    this.listeners.add(changed);
    return () => this.listeners.delete(changed);
  };

  private slot(name: string): number {
    let slot = this.slotOf.get(name);
    if (slot === undefined) {
      // The first free colour from the preferred one on; when every colour is held, the preferred one.
      const preferred = hash(name) % this.palette.length;
      slot = this.firstFrom(preferred, (candidate) => this.holders[candidate] === 0) ?? preferred;
      this.slotOf.set(name, slot);
      this.holders[slot]++;
      this.order.set(name, this.order.size);
    }
    return slot;
  }

  /** The first colour from the name's preferred one that fits and is held by the fewest names of those that fit. */
  private leastHeld(name: string, fits: (slot: number) => boolean): number | undefined {
    const fitting = this.holders.filter((_, slot) => fits(slot));
    if (fitting.length === 0) return undefined;
    const least = Math.min(...fitting);
    return this.firstFrom(hash(name) % this.palette.length, (slot) => fits(slot) && this.holders[slot] === least);
  }

  private firstFrom(preferred: number, fits: (slot: number) => boolean): number | undefined {
    for (let step = 0; step < this.palette.length; step++) {
      const candidate = (preferred + step) % this.palette.length;
      if (fits(candidate)) return candidate;
    }
    return undefined;
  }

  /** Names drawn together: each that shares a colour with one seen before it moves, where it can. */
  private meet(names: readonly string[]): void {
    const together = [...new Set(names)];
    for (const name of together) {
      this.slot(name);
      const drawnWith = this.drawnWith.get(name) ?? this.drawnWith.set(name, new Set()).get(name)!;
      for (const other of together) if (other !== name) drawnWith.add(other);
    }
    let moved = false;
    for (const name of together.sort((a, b) => this.seen(a) - this.seen(b))) {
      const mine = this.slotOf.get(name)!;
      const beside = [...this.drawnWith.get(name)!];
      const earlier = beside.filter((other) => this.seen(other) < this.seen(name)).map((other) => this.slotOf.get(other)!);
      if (!earlier.some((slot) => this.alike[slot][mine])) continue;
      const taken = beside.map((other) => this.slotOf.get(other)!);
      // A colour told apart from every chart-mate's; else from those seen before it (so a chart's first three names
      // are always told apart: no colour is alike to more than eight others) and held by none of the rest; else, where
      // it shares one, any colour none of them holds.
      const next =
        this.leastHeld(name, (slot) => !taken.some((t) => this.alike[t][slot])) ??
        this.leastHeld(name, (slot) => !taken.includes(slot) && !earlier.some((t) => this.alike[t][slot])) ??
        (earlier.includes(mine) ? this.leastHeld(name, (slot) => !taken.includes(slot)) : undefined);
      if (next === undefined) continue;
      this.holders[mine]--;
      this.holders[next]++;
      this.slotOf.set(name, next);
      moved = true;
    }
    if (moved) this.tell();
  }

  /** Charts drawn before a move learn of it once the current render is over. */
  private tell(): void {
    this.now = this.view();
    if (this.telling) return;
    this.telling = true;
    queueMicrotask(() => {
      this.telling = false;
      for (const changed of this.listeners) changed();
    });
  }

  private view(): ColorsNow {
    return { colorsOf: (names) => this.colorsOf(names) };
  }

  private seen(name: string): number {
    return this.order.get(name) ?? Infinity;
  }
}

/** The page's colours, shared by every chart in this browser tab (they outlive a page change). */
export const seriesColors = new SeriesColors();
