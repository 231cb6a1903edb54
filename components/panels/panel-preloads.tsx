/**
 * Starts a page's panel requests before its scripts have loaded and measured it (about half a second
 * later): with the HTML when the browser's width cookie says how wide the page was last time, and from
 * an inline script as soon as the page is laid out, which also covers a first visit and a window
 * resized since. A URL preloaded both ways is requested once. A server component: place it after the
 * view, so the element the script measures is already in the document.
 */
import { cookies, headers } from "next/headers";
import { preload } from "react-dom";
import { chartWidths, WIDTH_COOKIE, WIDTH_SLOTS, widthFromCookie, type ChartWidths } from "@/lib/panels/panel-url";
import { preloadScript } from "@/lib/panels/preload-script";

interface Props {
  /** the page's panel URLs when its charts are this wide; none when it would ask for nothing */
  urls: (widths: ChartWidths) => string[];
  /** the element whose width the page's charts follow */
  selector: string;
}

export async function PanelPreloads({ urls, selector }: Props) {
  const templates = urls(WIDTH_SLOTS);
  if (templates.length === 0) return null;
  const lastWidth = widthFromCookie((await cookies()).get(WIDTH_COOKIE)?.value);
  if (lastWidth !== null) for (const url of urls(chartWidths(lastWidth))) preload(url, { as: "fetch", crossOrigin: "anonymous" });
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  return <script nonce={nonce} dangerouslySetInnerHTML={{ __html: preloadScript(templates, selector, WIDTH_SLOTS) }} />;
}
