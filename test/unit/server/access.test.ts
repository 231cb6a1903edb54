import { describe, expect, it } from "vitest";
import { authorize, contentSecurityPolicy } from "@/lib/server/access";

const h = (values: Record<string, string>) => new Headers(values);
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("authorize", () => {
  it("admits everyone without built-in auth, naming the user only from the configured proxy header", () => {
    expect(authorize({}, "/", h({ "x-forwarded-user": "alice" }))).toEqual({ ok: true, user: undefined });
    expect(authorize({ userHeader: "X-Forwarded-User" }, "/", h({ "x-forwarded-user": " alice " }))).toEqual({ ok: true, user: "alice" });
  });

  it("checks basic auth and bearer tokens, keeps the probes open, and challenges everything else", () => {
    const auth = { basic: { username: "sre", password: "p:w" }, bearerToken: "t0k" };
    expect(authorize(auth, "/", h({ authorization: basic("sre", "p:w") }))).toEqual({ ok: true, user: "sre" });
    expect(authorize(auth, "/", h({ authorization: "bearer t0k" }))).toEqual({ ok: true, user: "bearer token" });
    expect(authorize(auth, "/healthz", h({}))).toEqual({ ok: true });
    for (const authorization of [basic("sre", "p"), basic("SRE", "p:w"), "Bearer t0", "Bearer", "Basic !!", "t0k"]) {
      expect(authorize(auth, "/api/markers", h({ authorization })), authorization).toMatchObject({
        ok: false,
        status: 401,
        message: "the credentials were not accepted",
      });
    }
    expect(authorize(auth, "/", h({}))).toEqual({
      ok: false,
      status: 401,
      challenge: 'Basic realm="Churnscope", charset="UTF-8"',
      message: "sign in: send basic auth or a bearer token",
    });
    expect(authorize({ bearerToken: "t0k" }, "/", h({}))).toMatchObject({ challenge: 'Bearer realm="Churnscope"' });
    // With credentials checked here, the proxy header names nobody: a token holder could send any name in it.
    const both = { ...auth, userHeader: "X-Forwarded-User" };
    expect(authorize(both, "/", h({ authorization: "Bearer t0k", "x-forwarded-user": "mallory" }))).toEqual({ ok: true, user: "bearer token" });
    expect(authorize(both, "/", h({ authorization: basic("sre", "p:w"), "x-forwarded-user": "mallory" }))).toEqual({ ok: true, user: "sre" });
  });
});

describe("the Content-Security-Policy", () => {
  it("allows scripts only from here or with the response's nonce, and never framing", () => {
    const csp = contentSecurityPolicy("abc", false);
    expect(csp).toContain("script-src 'self' 'nonce-abc' 'strict-dynamic'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-eval");
    expect(contentSecurityPolicy("abc", true)).toContain("'unsafe-eval'");
  });
});
