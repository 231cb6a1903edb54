/**
 * Every object reachable from the Objects list opens its own timeline in Chromium, whatever its name:
 * RBAC's colon names, reserved URL characters, non-ASCII, cluster-scoped objects. The expected counts
 * are the writes this test put in the store.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WriteStore } from "@/lib/store/store";
import { startApp, type TestApp } from "../helpers/app";
import { ARTIFACTS, launchBrowser } from "../helpers/browser";
import type { ObjectKey } from "@/lib/wire/objects";

const START = Math.floor((Date.now() - 2 * 3_600_000) / 60_000) * 60_000;
const RBAC = "rbac.authorization.k8s.io";
const objects: { key: ObjectKey; writes: number }[] = [
  { key: { cluster: "default", group: RBAC, kind: "Role", namespace: "default", name: "audit2rbac:bob" }, writes: 5 },
  { key: { cluster: "default", group: RBAC, kind: "ClusterRole", namespace: "", name: "system:controller:attachdetach-controller" }, writes: 3 },
  { key: { cluster: "prod-eu", group: RBAC, kind: "RoleBinding", namespace: "team-a", name: "a b+c&d=e#f?g@h;i,j'k\"l" }, writes: 4 },
  { key: { cluster: "prod-eu", group: "", kind: "ConfigMap", namespace: "team-a", name: "ünïcødé-名前-🙂" }, writes: 2 },
  { key: { cluster: "prod-eu", group: "", kind: "Namespace", namespace: "", name: "openshift-ovn-kubernetes" }, writes: 6 },
];

let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "churnscope-e2e-names-"));
  const store = await WriteStore.open(join(dataDir, "churnscope.sqlite"));
  await store.batch(async () => {
    for (const { key, writes } of objects) {
      for (let i = 0; i < writes; i++)
        await store.record(key, {
          tsMs: START + i * 60_000,
          cls: i % 2 ? "unrouted" : "no-op",
          writer: "tester",
          source: "audit",
          heartbeat: false,
          changes: [],
          projection: {},
        });
    }
  });
  await store.close();
  app = await startApp({ CHURNSCOPE_DATA_DIR: dataDir });
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("object names in Chromium", () => {
  it("opens every object's timeline from the Objects list, with all its writes", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${app.url}/objects?from=now-6h&to=now`);
    await page.waitForSelector('[data-testid="objects-table"][data-state="ready"] tr[data-object]');
    const links = await page.$$eval("tr[data-object]", (rows) =>
      rows.map((row) => ({ object: row.getAttribute("data-object")!, href: row.querySelector("a")!.getAttribute("href")! })),
    );
    const expected = objects.map(({ key }) => `${key.cluster}/${key.kind}/${key.namespace}/${key.name}`);
    expect(links.map((l) => l.object).sort()).toEqual([...expected].sort());
    for (const { key, writes } of objects) {
      const link = links.find((l) => l.object === `${key.cluster}/${key.kind}/${key.namespace}/${key.name}`)!;
      const requested: string[] = [];
      const listener = (request: { url(): string }) => {
        if (request.url().includes("/api/objects/")) requested.push(request.url());
      };
      page.on("request", listener);
      await page.goto(`${app.url}${link.href}`);
      await page.waitForSelector('[data-testid="timeline"][data-state="ready"]');
      page.off("request", listener);
      await expect(page.textContent('[data-testid="object-title"]')).resolves.toBe(`${key.kind} ${key.namespace ? `${key.namespace}/` : ""}${key.name}`);
      await expect(page.textContent('[data-testid="write-counts"]')).resolves.toMatch(new RegExp(`^${writes} writes`));
      expect(await page.$$eval("[data-column]", (gs) => gs.reduce((n, g) => n + Number(g.getAttribute("data-n")), 0))).toBe(writes);
      // One encoding only: the API request names the object as the link did.
      expect(requested.length).toBeGreaterThan(0);
      for (const url of requested) expect(url).not.toContain("%25");
    }
    await page.screenshot({ path: join(ARTIFACTS, "object-names-timeline.png"), fullPage: true });
    await page.close();
  });
});
