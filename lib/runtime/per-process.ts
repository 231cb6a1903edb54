/**
 * One value per process under `name`, made on first use. Next loads `lib` more than once (for pages and
 * again for route handlers), and a module-level variable would be one per copy: two server contexts,
 * two connections to a store, two roll-up threads.
 */
/** The value made under `name`, if anything has made it yet (nothing is made here). */
export function existing<T>(name: string): T | undefined {
  return (globalThis as Record<symbol, unknown>)[Symbol.for(`churnscope.${name}`)] as T | undefined;
}

export function perProcess<T>(name: string, create: () => T): T {
  const holder = globalThis as Record<symbol, unknown>;
  const key = Symbol.for(`churnscope.${name}`);
  if (!(key in holder)) holder[key] = create();
  return holder[key] as T;
}
