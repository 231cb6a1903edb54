/**
 * Who may use Churnscope, decided before any page (proxy.ts) or API (api.ts) runs. By default an auth proxy
 * in front decides, and Churnscope trusts `auth.userHeader` for the user's name. With `auth.bearerToken`
 * or `auth.basicAuth` set, Churnscope checks credentials itself: either one admits a request, and the
 * user is who the credentials name (a token holder could send any header, so it is not read then). The
 * probes stay open so the kubelet can reach them. Comparisons take the same time whatever the input.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { AppConfig } from "../config/load";

const OPEN_PATHS = new Set(["/healthz", "/readyz"]);

export type Access = { ok: true; user?: string } | { ok: false; status: 401; challenge?: string; message: string };

const digest = (text: string) => createHash("sha256").update(text).digest();
/** Equal secrets, compared in the same time whatever they are; an empty one matches nothing. */
export const sameSecret = (a: string, b: string) => timingSafeEqual(digest(a), digest(b)) && a !== "" && b !== "";

/** What `authorize` reads of a request's headers. */
export type HeaderReader = Pick<Headers, "get">;

export function authorize(auth: AppConfig["auth"], path: string, headers: HeaderReader): Access {
  const userFromProxy = auth.userHeader ? headers.get(auth.userHeader)?.trim().slice(0, 200) || undefined : undefined;
  if (!auth.bearerToken && !auth.basic) return { ok: true, user: userFromProxy };
  if (OPEN_PATHS.has(path)) return { ok: true };
  const header = headers.get("authorization") ?? "";
  const [scheme, credentials = ""] = header.split(/\s+/, 2);
  if (auth.bearerToken && scheme?.toLowerCase() === "bearer" && sameSecret(credentials, auth.bearerToken)) return { ok: true, user: "bearer token" };
  if (auth.basic && scheme?.toLowerCase() === "basic") {
    const decoded = Buffer.from(credentials, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const username = colon === -1 ? decoded : decoded.slice(0, colon);
    const password = colon === -1 ? "" : decoded.slice(colon + 1);
    // Both compared in full, so a wrong username takes as long as a wrong password.
    const userOk = sameSecret(username, auth.basic.username);
    const passwordOk = sameSecret(password, auth.basic.password);
    if (userOk && passwordOk) return { ok: true, user: username };
  }
  return {
    ok: false,
    status: 401,
    ...(auth.basic ? { challenge: 'Basic realm="Churnscope", charset="UTF-8"' } : auth.bearerToken ? { challenge: 'Bearer realm="Churnscope"' } : {}),
    message: header
      ? "the credentials were not accepted"
      : `sign in: send ${[auth.basic ? "basic auth" : "", auth.bearerToken ? "a bearer token" : ""].filter(Boolean).join(" or ")}`,
  };
}

/** A fresh nonce for one response's Content-Security-Policy. */
export const newNonce = () => Buffer.from(crypto.randomUUID()).toString("base64");

/** The Content-Security-Policy for one response: scripts only from here or with this response's nonce. */
export function contentSecurityPolicy(nonce: string, development: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ""}`,
    // Charts and React set style attributes; no script can run from a style.
    "style-src 'self' 'unsafe-inline'",
    // PNG export draws the chart through a blob: image.
    "img-src 'self' blob: data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}
