/** `npm start` as an operator meets it: a bad configuration stops it with a message; no configuration explains itself. */
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { startApp, startCommand, writeConfig } from "../helpers/app";

async function exitOf(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const running = startCommand(env);
  const timer = setTimeout(() => void running.stop(), 30_000);
  const [code] = (await once(running.child, "exit")) as [number | null];
  clearTimeout(timer);
  return { code, output: running.output() };
}

describe("startup", () => {
  it("stops with a message naming the key and the reason for a bad configuration file", async () => {
    const config = writeConfig("prometheus:\n  url: not a url\n  timeoutSeconds: 0\n");
    const { code, output } = await exitOf({ CHURNSCOPE_CONFIG: config });
    expect(code).toBe(1);
    expect(output).toMatch(/prometheus\.url: expected an http:\/\/ or https:\/\/ URL/);
    expect(output).toMatch(/prometheus\.timeoutSeconds: /);
    expect(output).not.toMatch(/Ready in/);
  });

  it("stops with a message naming the environment variable for a bad shortcut", async () => {
    const { code, output } = await exitOf({ PORT: "http" });
    expect(code).toBe(1);
    expect(output).toMatch(/PORT \(server\.port\)/);
  });

  it("with nothing configured serves a page that explains how to connect Prometheus, and the API says so", async () => {
    const app = await startApp({});
    try {
      const page = await fetch(`${app.url}/`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain("Connect Churnscope to Prometheus");
      expect(html).toContain("PROMETHEUS_URL=");
      const api = await fetch(`${app.url}/api/panels/writes-by-resource`);
      expect(api.status).toBe(503);
      expect(await api.json()).toMatchObject({ status: "error", errorType: "not_configured" });
    } finally {
      await app.stop();
    }
  });
});
