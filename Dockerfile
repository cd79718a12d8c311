# Build the single executable, then ship it alone on a slim base.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx bun scripts/build.ts dist/gatehouse

FROM debian:bookworm-slim
RUN useradd --system --home /data --shell /usr/sbin/nologin gatehouse \
 && mkdir -p /data && chown gatehouse /data
COPY --from=build /src/dist/gatehouse /usr/local/bin/gatehouse
ENV DATA_DIR=/data PORT=8080
VOLUME /data
EXPOSE 8080
USER gatehouse
ENTRYPOINT ["/usr/local/bin/gatehouse"]
CMD ["serve"]
