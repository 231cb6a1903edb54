/** Uploaded snapshot bundles in the store's database (PostgreSQL), which every replica reads: see lib/snapshot/bundles.ts. */
import type { BundleStore } from "../snapshot/bundles";
import type { SqlEngine } from "./engine/types";

export class EngineBundles implements BundleStore {
  constructor(private readonly engine: SqlEngine) {}

  async read(id: string): Promise<Buffer | undefined> {
    const row = await this.engine.get<{ bundle: Buffer }>("SELECT bundle FROM snapshot_bundles WHERE id = ?", [id]);
    return row ? Buffer.from(row.bundle) : undefined;
  }

  async write(id: string, bytes: Uint8Array): Promise<void> {
    await this.engine.run("INSERT INTO snapshot_bundles (id, bundle, bytes, stored_ms) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING", [
      id,
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      bytes.byteLength,
      Date.now(),
    ]);
  }
}
