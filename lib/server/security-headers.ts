/**
 * Headers on every response: pages and static files (next.config.ts) and the API (api.ts). The Content-Security-Policy is per response
 * (access.ts): it carries a nonce.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
};
