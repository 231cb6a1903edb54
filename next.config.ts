import type { NextConfig } from "next";
import { SECURITY_HEADERS } from "./lib/server/security-headers";

// The container image is built from Next's standalone output (CHURNSCOPE_STANDALONE=1, see Dockerfile);
// `npm start` runs serve.cjs on the ordinary build. A test builds the standalone one into its own directory.
const standalone = process.env.CHURNSCOPE_STANDALONE === "1";

const nextConfig: NextConfig = {
  // client-node is ESM-only and large; loading it at runtime keeps server chunks small.
  serverExternalPackages: ["@kubernetes/client-node"],
  poweredByHeader: false,
  // On every response, static files included; the Content-Security-Policy comes from proxy.ts (it needs a nonce).
  headers: async () => [
    {
      source: "/:path*",
      headers: Object.entries(SECURITY_HEADERS).map(([key, value]) => ({ key, value })),
    },
  ],
  ...(process.env.CHURNSCOPE_DIST_DIR ? { distDir: process.env.CHURNSCOPE_DIST_DIR } : {}),
  ...(standalone
    ? {
        output: "standalone" as const,
        // Not imported by the app, so the tracer cannot see them: the embedded replay (read by path at run time)
        // and the server the image runs (serve.cjs).
        outputFileTracingIncludes: { "/**": ["lib/demo/replay.snapshot.json.gz", "serve.cjs"] },
        // Next's image optimizer (sharp, 19 MB of native code) serves next/image only, which no page uses; the
        // server's own trace is the one keyed "next-server".
        outputFileTracingExcludes: { "next-server": ["**/node_modules/sharp/**/*", "**/node_modules/@img/**/*"] },
      }
    : {}),
};

export default nextConfig;
