/**
 * Headers on every response, static files included (next.config.ts), and on panel answers the server
 * sends before Next sees them (panel-fast-path.ts). The Content-Security-Policy is per response
 * (access.ts): it carries a nonce.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
};
