# Tally: one image for every role (TALLY_ROLE=all|api|worker).
# glibc base: chDB's native library (embedded mode) is built for linux-*-gnu.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN node scripts/build.mjs && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    TALLY_DATA_DIR=/var/lib/tally \
    TALLY_HTTPS_PORT=8443 \
    TALLY_HTTP_PORT=8080
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /var/lib/tally && chown node:node /var/lib/tally
USER node
VOLUME ["/var/lib/tally"]
EXPOSE 8443 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.TALLY_HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--max-semi-space-size=64", "dist/main.js"]
