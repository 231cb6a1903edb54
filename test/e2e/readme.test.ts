/**
 * The README's "Five minutes on the replay", followed in Chromium as a new user would: every phrase it quotes (in
 * italics or as code) and every figure it cites is on the screen that step opens, as written. Read from README.md
 * itself, so a sentence changed on either side fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { waitForDrawn } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";
import { ROOT } from "../helpers/root";

const h = useReplayApp();
const squash = (text: string) => text.replace(/\s+/g, " ").trim();

/** Each numbered step of the section: what it quotes, and the figures its prose cites. */
function steps(): { quotes: string[]; figures: string[] }[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Five minutes on the replay"));
  const body = section.slice(0, section.indexOf("\n## ", 3));
  return body
    .split(/^\d+\. /m)
    .slice(1)
    .map((step) => {
      const text = squash(step);
      // Code spans first (a name may hold an underscore), then italics, written _so_ (or *so*).
      const code = [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
      const rest = text.replace(/`[^`]+`|<[^>]+>/g, " ");
      const italic = /(?<![\w*])[_*](?![_*\s])(.+?)(?<![\s_*])[_*](?![\w*])/g;
      const quotes = [...code, ...[...rest.matchAll(italic)].map((m) => m[1])].map(squash);
      const prose = rest.replace(italic, " ");
      // A count, a decimal or a percentage standing alone (not part of a time, a date or a name).
      const figures = [...prose.matchAll(/(?<![\w.,:/-])\d{1,3}(?:,\d{3})*(?:\.\d+)?(?: %)?(?![\w.,:/-])/g)].map((m) => m[0]);
      return { quotes, figures };
    });
}

/** What the page says, its collapsed sections opened. */
async function screenText(page: Page): Promise<string> {
  await page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true)));
  return squash(await page.evaluate(() => document.body.innerText));
}

function expectOnScreen(step: number, screen: string, { quotes, figures }: { quotes: string[]; figures: string[] }) {
  for (const quote of quotes) expect(screen, `step ${step} quotes "${quote}"`).toContain(quote);
  for (const figure of figures)
    expect(new RegExp(`(?<![\\d,.])${figure.replace(/[.]/g, "\\.")}(?![\\d,]|\\.\\d)`).test(screen), `step ${step} cites ${figure}`).toBe(true);
}

describe("the README's five minutes on the replay", () => {
  it("shows every phrase and figure it quotes, step by step", async () => {
    const [load, verbs, objects, timeline, , clients] = steps();
    const page = await h.browser.newPage({ viewport: { width: 1440, height: 900 } });
    try {
      // 1–2: the first page.
      await page.goto(h.app.url);
      await waitForDrawn(page, "writes-by-resource");
      await waitForDrawn(page, "writes-by-verb");
      await page.waitForSelector('[data-testid="changes-summary"][data-state="ready"]', { timeout: 60_000 });
      const first = await screenText(page);
      expectOnScreen(1, first, load);
      expectOnScreen(2, first, verbs);

      // 3: Objects →, next to the resource.
      await page.click('a:has-text("Objects →")');
      await page.waitForSelector('[data-testid="objects-table"][data-state="ready"] tr[data-object]', { timeout: 60_000 });
      expectOnScreen(3, await screenText(page), objects);
      const objectsUrl = page.url();

      // 4: the first object's timeline, then Lanes → on Objects.
      await page.locator('[data-testid="objects-table"] tr[data-object] a').first().click();
      await page.waitForSelector('[data-testid="timeline"][data-state="ready"] [data-column]', { timeout: 60_000, state: "attached" });
      const timelineText = await screenText(page);
      await page.goto(objectsUrl);
      await page.click('a:has-text("Lanes →")');
      await page.waitForSelector("text=objects: the", { timeout: 60_000 });
      expectOnScreen(4, `${timelineText} ${await screenText(page)}`, timeline);

      // 6: Clients, before and after comparing at the onset.
      await page.click('nav a:has-text("Clients")');
      await page.waitForSelector('[data-testid="clients-table"] tr[data-client]', { timeout: 60_000 });
      const offered = await screenText(page);
      await page.click('[data-testid="clients-table"] button:has-text("Compare before/after 2026")');
      await page.waitForSelector('[data-testid="clients-table"] [data-cell="before"]', { timeout: 60_000 });
      expectOnScreen(6, `${offered} ${await screenText(page)}`, clients);
    } finally {
      await page.close();
    }
  });

  it("quotes something on each step it checks", () => {
    const [load, verbs, objects, timeline, , clients] = steps();
    for (const step of [load, verbs, objects, timeline, clients]) expect(step.quotes.length).toBeGreaterThan(0);
    expect(objects.figures).toEqual(expect.arrayContaining(["1,274", "1,273", "99.9 %"]));
  });
});
