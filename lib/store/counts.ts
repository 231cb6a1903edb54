/** The per-object counts the Objects ranking sums: over raw writes, and as the roll-ups' columns. */

/** The per-object sums the ranking reads, over raw writes or over rolled-up hours and spans. */
export const CLASS_SUMS = `COUNT(*) AS writes,
  COUNT(*) FILTER (WHERE w.class = 'create') AS c_create, COUNT(*) FILTER (WHERE w.class = 'delete') AS c_delete,
  COUNT(*) FILTER (WHERE w.class = 'routed') AS c_routed, COUNT(*) FILTER (WHERE w.class = 'unrouted') AS c_unrouted,
  COUNT(*) FILTER (WHERE w.class = 'no-op') AS c_noop, COUNT(*) FILTER (WHERE w.class = 'unknown') AS c_unknown, SUM(w.heartbeat) AS c_heartbeat`;
export const COUNT_COLUMNS = ["writes", "c_create", "c_delete", "c_routed", "c_unrouted", "c_noop", "c_unknown", "c_heartbeat"] as const;
// INT, which stays 32-bit on PostgreSQL (the schema's INTEGER become BIGINT there): eight days' count of one object's writes
// fits, and PostgreSQL sums it as a 64-bit integer, where it sums a BIGINT as NUMERIC (a quarter slower), in narrower rows.
export const COUNTS = COUNT_COLUMNS.map((c) => `${c} INT NOT NULL`).join(", ");
