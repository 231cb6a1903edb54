/** Uploaded snapshot bundles in the store's database (PostgreSQL), which every replica reads: see lib/snapshot/bundles.ts. */
import type { BundleStore, KeptBundle } from "../snapshot/bundles";
import type { SqlEngine } from "./engine/types";

export class EngineBundles implements BundleStore {
  /** `engine`: the database, or how to reach it once it has opened (the server opens it at start) */
  constructor(private readonly engine: SqlEngine | (() => Promise<SqlEngine>)) {}

  private opened(): Promise<SqlEngine> {
    return typeof this.engine === "function" ? this.engine() : Promise.resolve(this.engine);
  }

  async read(id: string): Promise<Buffer | undefined> {
    const row = await (await this.opened()).get<{ bundle: Buffer }>("SELECT bundle FROM snapshot_bundles WHERE id = ?", [id]);
    return row ? Buffer.from(row.bundle) : undefined;
  }

  async recent(limit: number): Promise<KeptBundle[]> {
    const rows = await (
      await this.opened()
    ).all<{ id: string; stored_ms: number | string }>("SELECT id, stored_ms FROM snapshot_bundles ORDER BY stored_ms DESC, id LIMIT ?", [limit]);
    return rows.map((r) => ({ id: r.id, storedMs: Number(r.stored_ms) }));
  }

  async write(id: string, bytes: Uint8Array): Promise<void> {
    await (
      await this.opened()
    ).run("INSERT INTO snapshot_bundles (id, bundle, bytes, stored_ms) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING", [
      id,
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      bytes.byteLength,
      Date.now(),
    ]);
  }
}
