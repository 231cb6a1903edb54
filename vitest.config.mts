import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";
import { LongestFirst } from "./test/sequencer.mts";

const root = fileURLToPath(new URL(".", import.meta.url));

// Three projects so the test runner can run them one after another: unit tests are fast, a file at a time beside the build;
// integration and e2e start real servers (each file its own, on free ports and in its own temp dirs), two files
// at a time: much of a file's time is waiting on a server, and two keep both cores busy.
export default defineConfig({
  resolve: { alias: { "@": root } },
  test: {
    sequence: { sequencer: LongestFirst },
    setupFiles: ["./test/no-promise-expected.ts"],
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node" } },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          maxWorkers: 2,
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          maxWorkers: 2,
          testTimeout: 90_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
