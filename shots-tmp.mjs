import { chromium } from "playwright-core";
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
for (const [name, viewport] of [["laptop", { width: 1400, height: 900 }], ["phone", { width: 390, height: 844 }]]) {
  const page = await browser.newPage({ viewport });
  await page.goto("http://127.0.0.1:3456/?snapshot=replay");
  await page.waitForSelector('[data-testid="changes-summary"] details', { timeout: 30000, state: "attached" });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: `/tmp/shot2-${name}.png` });
  await page.locator('[data-testid="changes-summary"] summary').click();
  await page.waitForTimeout(300);
  await page.locator('[data-testid="changes-summary"]').screenshot({ path: `/tmp/shot2-${name}-changes.png` });
  await page.close();
}
await browser.close();
