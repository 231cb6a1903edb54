/**
 * The methods each API route takes, in one place, so a request with another method is a 405 envelope
 * with the security headers (Next answers it with an empty body). A unit test checks this against the
 * route files themselves.
 */
const GET = ["GET", "HEAD"];

export const API_ROUTES: readonly { path: RegExp; methods: readonly string[] }[] = [
  { path: /^\/api\/panels\/[^/]+$/, methods: GET },
  { path: /^\/api\/objects(\/.+)?$/, methods: GET },
  { path: /^\/api\/(markers|apiservers|clients|fields)$/, methods: GET },
  { path: /^\/api\/snapshots$/, methods: ["POST"] },
  { path: /^\/api\/snapshots\/export$/, methods: GET },
  { path: /^\/api\/snapshots\/[^/]+$/, methods: GET },
  { path: /^\/api\/notes$/, methods: ["POST"] },
  { path: /^\/api\/notes\/[^/]+$/, methods: ["DELETE"] },
  { path: /^\/api\/audit\/webhook(\/[^/]+)?$/, methods: ["POST"] },
  { path: /^\/api\/audit\/uploads$/, methods: ["POST"] },
];

/** The methods the API route at `path` takes (OPTIONS always, as Next answers it); null for a path that is not an API route. */
export function apiMethods(path: string): readonly string[] | null {
  return API_ROUTES.find((route) => route.path.test(path))?.methods ?? null;
}
