# Build the single executable, then ship it alone on a slim base.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx bun scripts/build.ts dist/gatehouse

FROM debian:bookworm-slim
# A fixed uid/gid (10001): a bind-mounted DATA_DIR is prepared on the host with
# `chown 10001:10001 <dir>`; a named volume copies /data's owner and mode from the image.
RUN groupadd --system --gid 10001 gatehouse \
 && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home \
      --shell /usr/sbin/nologin gatehouse \
 && mkdir -p /data && chown 10001:10001 /data && chmod 0700 /data
COPY --from=build /src/dist/gatehouse /usr/local/bin/gatehouse
# Set BASE_URL to the public URL (`-e BASE_URL=https://auth.example.com`): links, redirects and
# issuers are built from it, and its default names localhost.
ENV DATA_DIR=/data PORT=8080
VOLUME /data
EXPOSE 8080
# Numeric, so a runtime can check "not root" without reading /etc/passwd.
USER 10001:10001
# Reads HOST/PORT only and writes nothing; exits 1 with one line when /healthz does not answer 200.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["/usr/local/bin/gatehouse", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/gatehouse"]
CMD ["serve"]
