# Churnscope as a container: Next's standalone output on Node 20, run as a non-root user with a
# read-only root filesystem; the data directory (SQLite stores, uploaded snapshots, notes) is /data.
#   docker build -t churnscope .
#   docker run --read-only --tmpfs /tmp -v churnscope-data:/data -p 3000:3000 churnscope

FROM node:20-bookworm-slim AS deps
WORKDIR /src
# better-sqlite3 ships prebuilt binaries for this platform; the toolchain is the fallback when none fits.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM deps AS build
COPY . .
ENV NEXT_TELEMETRY_DISABLED=1 CHURNSCOPE_STANDALONE=1
RUN npm run build && node deploy/image/bundle-start.mjs

FROM node:20-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 PORT=3000 HOSTNAME=0.0.0.0 CHURNSCOPE_DATA_DIR=/data
# The server (serve.cjs and Next's), the node_modules it traced (better-sqlite3's native module included) and the embedded replay.
COPY --from=build /src/.next/standalone ./
COPY --from=build /src/.next/static ./.next/static
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# start.cjs is `npm start` bundled: it validates the config file, then runs serve.cjs (Next, with panel answers sent
# before Next's routing) on server.port, and on server.tls's port over https (the audit webhook needs it).
CMD ["node", "start.cjs"]
