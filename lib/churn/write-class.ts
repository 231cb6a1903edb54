/**
 * `no-op`: a write that changed nothing the profile reads (the same version back, which only an audit log
 * sees, or a new one that differs only in ignored paths); `unknown`: an audit write whose result or
 * predecessor the log does not show, counted but not classified.
 */
export const WRITE_CLASSES = ["create", "delete", "routed", "unrouted", "no-op", "unknown"] as const;
export type WriteClass = (typeof WRITE_CLASSES)[number];
