/**
 * Where uploaded snapshot bundles are kept, by id (a hash of their content, so the same id is the same bytes): files
 * under the data directory for one replica, or a table of the store's PostgreSQL database that every replica reads
 * (lib/store/snapshot-bundles.ts), so a shared link opens on whichever replica a Service picks.
 */
import { existsSync, mkdirSync } from "node:fs";
import { readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { KeptBundle } from "./format/schema";

export type { KeptBundle };

export interface BundleStore {
  /** the bundle as stored, or undefined when none has this id */
  read(id: string): Promise<Buffer | undefined>;
  /** keeps a bundle under its id; a second write of an id already kept changes nothing */
  write(id: string, bytes: Uint8Array): Promise<void>;
  /** the `limit` bundles kept last, newest first: what a link to an unknown snapshot offers instead */
  recent(limit: number): Promise<KeptBundle[]>;
}

export class FileBundles implements BundleStore {
  constructor(readonly dir: string) {}

  private pathOf(id: string): string {
    return join(this.dir, `${id}.json.gz`);
  }

  async read(id: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.pathOf(id));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async recent(limit: number): Promise<KeptBundle[]> {
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter((name) => /^[0-9a-f]{16}\.json\.gz$/.test(name));
    const kept = await Promise.all(names.map(async (name) => ({ id: name.slice(0, 16), storedMs: (await stat(join(this.dir, name))).mtimeMs })));
    return kept.sort((a, b) => b.storedMs - a.storedMs || a.id.localeCompare(b.id)).slice(0, limit);
  }

  async write(id: string, bytes: Uint8Array): Promise<void> {
    const path = this.pathOf(id);
    if (existsSync(path)) return;
    mkdirSync(this.dir, { recursive: true });
    // Named only once whole, so a crash never leaves half a bundle under its id.
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, bytes);
    await rename(temporary, path);
  }
}
