/**
 * What is refused before any route runs, for every request either server takes: a request target that is not
 * a path (`*`, absolute-form), methods that pages and static files do not take, Next's internal pages, and
 * writes a browser could be made to send from another site (a form or a no-cors fetch from a page elsewhere
 * carries the signed-in user's cached basic-auth credentials; only a same-origin page may write).
 */
import { ApiFailure } from "../api/envelope";
import type { HeaderReader } from "./access";

/** Pages, static files and the probes take these; Next's router answered others on static files with a 500. */
export const PAGE_METHODS = ["GET", "HEAD"];

/** Pages Next builds for itself, which rendered on their own answer 500 (/_global-error) or nothing meant for a user. */
const INTERNAL_PAGES = /^\/_(global-error|not-found|error|document|app)(\/|$)/;

/** Content types a page on another site can send without the browser asking this server first (CORS's "simple" ones). */
const FORM_TYPES = new Set(["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"]);

/** A request target that is not a path: `*` (OPTIONS *), or a URL (absolute-form, a proxy's request). */
export function targetRefusal(url: string): ApiFailure | null {
  return url.startsWith("/") ? null : new ApiFailure(400, "bad_request", "the request target must be a path");
}

/** A path outside /api/ asked with a method no page takes, or one of Next's internal pages. */
export function pageRefusal(method: string, path: string): { failure: ApiFailure; headers: Record<string, string> } | null {
  if (path === "/api" || path.startsWith("/api/")) return null;
  if (INTERNAL_PAGES.test(path)) return { failure: new ApiFailure(404, "not_found", "no page here"), headers: {} };
  if (!PAGE_METHODS.includes(method))
    return {
      failure: new ApiFailure(405, "method_not_allowed", `pages take ${PAGE_METHODS.join(" and ")}, not ${method}`),
      headers: { Allow: PAGE_METHODS.join(", ") },
    };
  return null;
}

/**
 * A write to a user's API that a page on another site could have sent: the browser says it came from another
 * site (Sec-Fetch-Site, or an Origin that is not this host), or its body is of a type a form can send. Scripts
 * (curl, CI) send neither header and name their body's type.
 */
export function crossSiteRefusal(method: string, headers: HeaderReader): ApiFailure | null {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return null;
  const site = headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none")
    return new ApiFailure(403, "forbidden", `writes are taken only from Churnscope's own pages (Sec-Fetch-Site: ${site.slice(0, 40)})`);
  const origin = headers.get("origin");
  if (origin !== null && !sameHost(origin, headers))
    return new ApiFailure(403, "forbidden", "writes are taken only from Churnscope's own pages (Origin is another site)");
  if (method === "DELETE") return null;
  const type = (headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type === "" || FORM_TYPES.has(type))
    return new ApiFailure(
      415,
      "unsupported_media_type",
      `send the body with its own Content-Type (application/json, application/octet-stream), not ${type || "none"}`,
    );
  return null;
}

/** Whether an Origin names the host this request was sent to (behind a proxy, the host it was forwarded for). */
function sameHost(origin: string, headers: HeaderReader): boolean {
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false; // "null" (a sandboxed frame, a redirect across sites) or junk
  }
  const hosts = [headers.get("host"), headers.get("x-forwarded-host")?.split(",")[0].trim()];
  return hosts.some((h) => h !== null && h !== undefined && h.toLowerCase() === host.toLowerCase());
}
