/** "resource.group" names as the pages and URLs use them. Free of dependencies, as browser code imports it. */
/** "connectors.networking.datumapis.com" → ["connectors", "networking.datumapis.com"]; "leases" → ["leases", undefined]. */
export function splitResource(value: string | undefined): [string | undefined, string | undefined] {
  if (value === undefined) return [undefined, undefined];
  const dot = value.indexOf(".");
  return dot === -1 ? [value, undefined] : [value.slice(0, dot), value.slice(dot + 1)];
}

/** The inverse of splitResource for a series' labels ("" group = core). */
export function joinResource(resource: string, group: string | undefined): string {
  return group ? `${resource}.${group}` : resource;
}
