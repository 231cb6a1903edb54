/**
 * `npm run build`'s last step: the replay's object store, built from the committed bundle into the build
 * output (and the standalone output the image copies), so the first Objects visit on a fresh start reads a
 * copy of it instead of waiting seconds while it is built. Built with the profiles of the configuration found
 * here; a server configured with other profiles builds its own on first use, as before.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadConfig } from "../config/load";
import { REPLAY_BUNDLE_PATH } from "../snapshot/store";
import { buildSnapshotStore, prebuiltReplayStore, snapshotStoreDigest } from "../store/snapshot-store";
import { WriteStore } from "../store/store";

const startedMs = Date.now();
const distDir = process.env.CHURNSCOPE_DIST_DIR || ".next";
const bundle = readFileSync(REPLAY_BUNDLE_PATH);
const digest = snapshotStoreDigest(bundle, loadConfig().profiles);
const target = prebuiltReplayStore(distDir);
async function main(): Promise<void> {
  if (existsSync(target.path) && existsSync(target.digestPath) && readFileSync(target.digestPath, "utf8").trim() === digest) {
    console.log(`replay-store: ${target.path} is up to date`);
  } else {
    const building = `${target.path}.building`;
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${building}${suffix}`, { force: true });
    mkdirSync(dirname(target.path), { recursive: true });
    const writes = await buildSnapshotStore({ path: building, bundle, maxBytes: 64 << 20, profiles: loadConfig().profiles, digest });
    // Says where a data directory's copy came from.
    const store = await WriteStore.open(building);
    await store.setMeta("built", "at build time");
    await store.close();
    renameSync(building, target.path);
    writeFileSync(target.digestPath, `${digest}\n`);
    console.log(`replay-store: ${writes} writes into ${target.path} in ${((Date.now() - startedMs) / 1000).toFixed(1)} s`);
  }
  // The image runs the standalone output, whose build directory lies inside it under the same name.
  const standalone = join(distDir, "standalone");
  if (existsSync(standalone)) {
    const inside = prebuiltReplayStore(join(standalone, distDir));
    mkdirSync(dirname(inside.path), { recursive: true });
    copyFileSync(target.path, inside.path);
    copyFileSync(target.digestPath, inside.digestPath);
    console.log(`replay-store: copied into ${inside.path}`);
  }
}

main().catch((error: Error) => {
  console.error(`replay-store: ${error.stack ?? error.message}`);
  process.exit(1);
});
