/**
 * Runs before every page: access control (lib/server/access.ts) and the per-response
 * Content-Security-Policy with a nonce that Next puts on its own scripts. The API decides both for
 * itself, in one place (lib/server/api.ts).
 */
import { NextResponse, type NextRequest } from "next/server";
import { authorize, contentSecurityPolicy, newNonce } from "./lib/server/access";
import { getServerContext } from "./lib/server/context";

export function proxy(request: NextRequest) {
  const path = request.nextUrl.pathname;
  let auth;
  try {
    auth = getServerContext().config.auth;
  } catch {
    // Without a valid configuration nobody can be admitted; the probes still answer (readyz says why).
    if (path !== "/healthz" && path !== "/readyz")
      return Response.json({ status: "error", errorType: "not_ready", error: "the configuration is not valid; see the server log" }, { status: 503 });
    return NextResponse.next();
  }
  const nonce = newNonce();
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const access = authorize(auth, path, request.headers);
  if (!access.ok) {
    const headers = { "Content-Security-Policy": csp, "Cache-Control": "no-store", ...(access.challenge ? { "WWW-Authenticate": access.challenge } : {}) };
    return Response.json({ status: "error", errorType: "unauthorized", error: access.message }, { status: 401, headers });
  }
  const headers = new Headers(request.headers);
  headers.set("x-nonce", nonce);
  headers.set("Content-Security-Policy", csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("Content-Security-Policy", csp);
  return response;
}

export const config = {
  // Static assets carry no user data; the headers in next.config.ts still apply to them. The API is
  // not run through here: Next would buffer an upload's body in memory and cut it at 10 MB.
  matcher: ["/((?!_next/static|_next/image|icon.svg|api/).*)"],
};
