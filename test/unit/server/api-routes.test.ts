/** The table of API methods says what the route files export, route by route. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { apiMethods } from "@/lib/server/api-routes";
import { ROOT } from "../../helpers/root";

function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? routeFiles(path) : name === "route.ts" ? [path] : [];
  });
}

describe("API_ROUTES", () => {
  it("names, for a path each route file serves, exactly the methods it exports (GET with HEAD)", () => {
    const files = routeFiles(join(ROOT, "app", "api"));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      // A path the route serves: its folders, with a sample value for each dynamic segment.
      const path = `/${relative(join(ROOT, "app"), file).replace(/\/route\.ts$/, "")}`.replace(/\[\.\.\.[^\]]+\]/, "a/b/c").replace(/\[[^\]]+\]/g, "x1");
      const exported = [...readFileSync(file, "utf8").matchAll(/export (?:async )?function (GET|POST|PUT|DELETE|PATCH)\b/g)].map((m) => m[1]);
      const expected = exported.flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m])).sort();
      expect([path, [...(apiMethods(path) ?? [])].sort()]).toEqual([path, expected]);
    }
    expect(apiMethods("/objects/a")).toBeNull();
  });
});
