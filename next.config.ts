import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // client-node is ESM-only and large; loading it at runtime keeps server chunks small.
  serverExternalPackages: ["@kubernetes/client-node"],
  poweredByHeader: false,
};

export default nextConfig;
