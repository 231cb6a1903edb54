/**
 * The writes the condition-clock and echo report reads (write-traits-query.ts): those with traits (an echo, a clock
 * finding, only clocks changed) and every no-op (a no-op without traits changed only what its profile ignores). Both
 * engines keep them in the partial index writes_traits, written with this same condition, and the roll-ups count
 * them per object and day, so the report reads neither every write nor every row.
 */
export const TRAITED = "(traits IS NOT NULL OR class = 'no-op')";
export const TRAITS_INDEX = `CREATE INDEX IF NOT EXISTS writes_traits ON writes (ts_ms, object_id, writer, class, traits) WHERE ${TRAITED}`;
export const TRAITS_MIGRATION =
  "what a write's versions say beyond its class (an echo, condition clocks that froze, were restamped or predate the object), indexed";
/** The writes a timeline marks: an echo, a clock-only write, a clock fault (not a transition whose clock moved, as it should). */
export const MARKED = `(traits LIKE '%"e"%' OR traits LIKE '%"="%' OR traits LIKE '%"f%' OR traits LIKE '%"r%' OR traits LIKE '%"p%')`;
