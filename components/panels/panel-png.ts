/**
 * A panel as a PNG for incident documents: title, unit and UTC range on top, the chart as drawn
 * (markers included), and the legend below, at twice the screen's pixels. The chart's canvas is
 * copied and its marker layer (SVG) rasterised through an <img> on top, so the picture is exactly
 * what the panel shows.
 */
const SCALE = 2;
const PAD = 12;
const FONT = "system-ui, -apple-system, 'Segoe UI', sans-serif";

export async function panelPng(section: HTMLElement, heading: string, subheading: string): Promise<Blob> {
  const chart = section.querySelector<HTMLElement>("[data-chart]");
  const plot = chart?.querySelector("canvas");
  if (!chart || !plot) throw new Error("this panel has no chart to export");
  const overlay = section.querySelector<SVGSVGElement>("svg[data-chart-overlay]");
  const style = getComputedStyle(document.documentElement);
  const color = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  const background = color("--panel", "#ffffff");
  const fg = color("--fg", "#1b1f24");
  const muted = color("--muted", "#5b6472");

  const { width, height } = chart.getBoundingClientRect();
  const legend = [...section.querySelectorAll<HTMLElement>('[data-testid="legend"] li')].map((li) => ({
    swatch: li.querySelector<HTMLElement>("[data-legend-swatch]")?.style.background || muted,
    // The name and its average are separate spans; their text runs together without a gap.
    text: [...li.querySelectorAll("[data-legend-text]")]
      .map((span) => span.textContent?.trim())
      .filter(Boolean)
      .join("  "),
  }));

  const measure = document.createElement("canvas").getContext("2d")!;
  measure.font = `11px ${FONT}`;
  const legendRows = layoutLegend(
    legend.map((l) => measure.measureText(l.text).width + 18),
    width,
  );
  const headerHeight = 40;
  const legendHeight = legendRows.length ? legendRows.length * 16 + 8 : 0;
  const canvas = document.createElement("canvas");
  canvas.width = Math.round((width + 2 * PAD) * SCALE);
  canvas.height = Math.round((headerHeight + height + legendHeight + PAD) * SCALE);
  const ctx = canvas.getContext("2d")!;
  ctx.scale(SCALE, SCALE);
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, width + 2 * PAD, headerHeight + height + legendHeight + PAD);
  ctx.textBaseline = "top";
  ctx.fillStyle = fg;
  ctx.font = `600 13px ${FONT}`;
  ctx.fillText(heading, PAD, PAD);
  ctx.fillStyle = muted;
  ctx.font = `11px ${FONT}`;
  ctx.fillText(subheading, PAD, PAD + 17);

  ctx.drawImage(plot, PAD, headerHeight, width, height);
  if (overlay) ctx.drawImage(await svgImage(overlay, width, height, muted), PAD, headerHeight, width, height);

  let y = headerHeight + height + 8;
  for (const row of legendRows) {
    let x = PAD;
    for (const index of row) {
      ctx.fillStyle = legend[index].swatch;
      ctx.fillRect(x, y + 2, 9, 9);
      ctx.fillStyle = fg;
      ctx.fillText(legend[index].text, x + 13, y);
      x += measure.measureText(legend[index].text).width + 18 + 12;
    }
    y += 16;
  }
  return new Promise((resolve, reject) =>
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("the browser could not encode the PNG"))), "image/png"),
  );
}

/** Which legend entries go on which line, for entries of the given widths in `width` pixels. */
export function layoutLegend(widths: number[], width: number): number[][] {
  const rows: number[][] = [];
  let used = 0;
  widths.forEach((w, i) => {
    if (rows.length === 0 || (used > 0 && used + w > width)) {
      rows.push([]);
      used = 0;
    }
    rows[rows.length - 1].push(i);
    used += w + 12;
  });
  return rows;
}

function svgImage(svg: SVGSVGElement, width: number, height: number, textColor: string): Promise<HTMLImageElement> {
  const clone = svg.cloneNode(true) as SVGSVGElement;
  clone.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  clone.setAttribute("width", String(width));
  clone.setAttribute("height", String(height));
  // Page CSS does not reach an SVG drawn as an image: give its text the font and colour it had.
  clone.setAttribute("font-family", FONT);
  clone.querySelectorAll("text:not([fill])").forEach((t) => t.setAttribute("fill", textColor));
  const url = URL.createObjectURL(new Blob([new XMLSerializer().serializeToString(clone)], { type: "image/svg+xml" }));
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => {
      URL.revokeObjectURL(url);
      resolve(image);
    };
    image.onerror = () => {
      URL.revokeObjectURL(url);
      reject(new Error("the chart could not be drawn as an image"));
    };
    image.src = url;
  });
}
