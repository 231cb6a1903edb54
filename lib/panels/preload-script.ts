/**
 * The inline script that starts a page's panel requests while its scripts are still loading. It
 * measures the page exactly as the page will (a ResizeObserver on the same element, floored), puts
 * the chart widths into the server's URLs and adds a `<link rel=preload as=fetch>` for each. The
 * page's own fetch of the same URL then takes the preloaded answer instead of asking again.
 */
import { chartWidths, type ChartWidths } from "./panel-url";

interface Plan {
  /** panel URLs with the widths written as `slots` */
  urls: string[];
  /** the element the page measures its width on */
  selector: string;
  slots: ChartWidths;
}

// Runs in the browser from its source text: it may use nothing but its arguments and the DOM.
function startPreloads(plan: Plan, widthsOf: (pageWidth: number) => ChartWidths): void {
  const element = document.querySelector(plan.selector);
  if (!element || typeof ResizeObserver !== "function") return;
  const observer = new ResizeObserver((entries) => {
    // Not laid out yet (no width): the next observation will have one.
    const widths = widthsOf(Math.floor(entries[0].contentRect.width));
    if (widths.full <= 0) return;
    observer.disconnect();
    for (const url of plan.urls) {
      const link = document.createElement("link");
      link.rel = "preload";
      link.as = "fetch";
      link.crossOrigin = "anonymous";
      link.href = url.replace(`width=${plan.slots.full}`, `width=${widths.full}`).replace(`width=${plan.slots.half}`, `width=${widths.half}`);
      document.head.appendChild(link);
    }
  });
  observer.observe(element);
}

/** The script's text, safe inside a `<script>` element whatever the URLs hold. */
export function preloadScript(urls: string[], selector: string, slots: ChartWidths): string {
  const plan: Plan = { urls, selector, slots };
  return `(${startPreloads.toString()})(${JSON.stringify(plan).replace(/</g, "\\u003c")}, ${chartWidths.toString()});`;
}
