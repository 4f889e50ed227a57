# syntax=docker/dockerfile:1
# Pier in a container: build the single executable, then run it on a slim Debian with nothing
# else in it. See docs/deployment.md ("Docker") for the run command, ports and volumes.
#
#   docker build -t pier .
#   docker run -d --name pier -p 80:8080 -p 25:2525 -v pier-data:/data \
#     -e PIER_BASE_URL=https://pier.example.com -e PIER_SITES_DOMAIN=sites.example.com pier

# ---- build: Node + npm fetch Bun (a dev dependency) and compile dist/pier ----
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# BUN_TARGET cross-compiles, e.g. bun-linux-x64-baseline for x86 CPUs without AVX2.
ARG BUN_TARGET=""
RUN if [ -n "$BUN_TARGET" ]; then npm run build -- --target "$BUN_TARGET"; else npm run build; fi \
 && ./dist/pier version

# ---- runtime: the binary, CA certificates for outbound TLS (ACME, GitHub), a non-root user ----
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 pier \
 && useradd --system --uid 10001 --gid pier --home-dir /data --shell /usr/sbin/nologin pier \
 && mkdir -p /data && chown pier:pier /data
COPY --from=build /src/dist/pier /usr/local/bin/pier

# Everything Pier keeps (pier.db, blobs/, secret.key) lives in /data: mount a volume and back it up.
VOLUME /data
ENV PIER_DATA_DIR=/data \
    PIER_HOST=0.0.0.0 \
    PIER_HTTP_PORT=8080 \
    PIER_SMTP_PORT=2525
# HTTP (sites, API, dashboard, ACME http-01) and SMTP. The process runs unprivileged, so publish
# the public ports onto these: -p 80:8080 -p 25:2525 (and -p 443:8443 with PIER_HTTPS_PORT=8443).
EXPOSE 8080 2525

USER pier:pier
WORKDIR /data
# No curl in the image: the binary checks itself (GET /livez with the configured port and
# base-URL host). Readiness (/readyz: database writable, disk not full, migrations applied) and
# Prometheus metrics (--metrics-token or --metrics-port) are in docs/operations.md.
HEALTHCHECK --interval=30s --timeout=10s --start-period=20s --retries=3 CMD ["pier", "healthcheck"]
# pier serve exits 0 on SIGTERM after closing listeners and finishing the running job.
STOPSIGNAL SIGTERM
ENTRYPOINT ["pier"]
CMD ["serve"]
