// Bundles `npm start` (lib/cli/start.ts: validate the configuration, then run serve.cjs with the https listener
// server.tls asks for) into start.cjs beside the standalone server, which the image runs: a container then reads
// its config file, and refuses a bad one, exactly as `npm start` does.
import { build } from "esbuild";

const distDir = process.env.CHURNSCOPE_DIST_DIR || ".next";
await build({
  entryPoints: ["lib/cli/start.ts"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  outfile: `${distDir}/standalone/start.cjs`,
  logLevel: "warning",
});
