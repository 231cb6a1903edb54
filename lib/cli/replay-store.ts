/**
 * `npm run build`'s last step: the replay's object store, built from the committed bundle into the build
 * output (and the standalone output the image copies), so the first Objects visit on a fresh start reads a
 * copy of it instead of waiting seconds while it is built. Built with the profiles of the configuration found
 * here; a server configured with other profiles builds its own on first use, as before. And the replay's held part
 * (snapshot/prebuilt-held.ts), so a fresh server opens the replay without unpacking it.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadConfig } from "../config/load";
import { prebuiltHeldPath, writePrebuiltHeld } from "../snapshot/prebuilt-held";
import { REPLAY_BUNDLE_PATH, REPLAY_MAX_BYTES } from "../snapshot/store";
import { buildPrebuiltStore, prebuiltReplayStore } from "../store/snapshot-store";

const startedMs = Date.now();
const distDir = process.env.CHURNSCOPE_DIST_DIR || ".next";
const target = prebuiltReplayStore(distDir);
async function main(): Promise<void> {
  const bundle = readFileSync(REPLAY_BUNDLE_PATH);
  const writes = await buildPrebuiltStore(bundle, loadConfig().profiles, distDir);
  if (writes === null) console.log(`replay-store: ${target.path} is up to date`);
  else console.log(`replay-store: ${writes} writes into ${target.path} in ${((Date.now() - startedMs) / 1000).toFixed(1)} s`);
  // Written again by every build: what the server keeps of a snapshot may change with the code as well as the bundle.
  writePrebuiltHeld(bundle, REPLAY_MAX_BYTES, prebuiltHeldPath(distDir));
  // The image runs the standalone output, whose build directory lies inside it under the same name.
  const standalone = join(distDir, "standalone");
  if (existsSync(standalone)) {
    const inside = prebuiltReplayStore(join(standalone, distDir));
    mkdirSync(dirname(inside.path), { recursive: true });
    copyFileSync(target.path, inside.path);
    copyFileSync(target.digestPath, inside.digestPath);
    copyFileSync(target.contentPath, inside.contentPath);
    copyFileSync(prebuiltHeldPath(distDir), prebuiltHeldPath(join(standalone, distDir)));
    console.log(`replay-store: copied into ${inside.path}`);
  }
}

main().catch((error: Error) => {
  console.error(`replay-store: ${error.stack ?? error.message}`);
  process.exit(1);
});
