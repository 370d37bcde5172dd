# The Agent Invocation Service in a container: the server bundle of `pnpm build:server-bundle`, started with
# `node service.mjs serve` in a folder of its own, exactly as test/server-bundle.test.ts builds, copies and starts it
# (docs/operations.md, "A deployable bundle"). Not built in CI here (the CI machine has no Docker).
#
#   docker build -t agent-invocation-service .
#   docker run -p 8080:8080 -v service-data:/app/data agent-invocation-service       (embedded store in the volume)
#   docker compose up                                                                (with PostgreSQL and Redis: compose.yaml)

# Build: the repository's tools (Node 24, pnpm 12, every dependency), then the bundle.
FROM node:24-bookworm-slim AS build
RUN npm install -g --allow-scripts=pnpm --no-audit --no-fund pnpm@12
WORKDIR /src
COPY . .
RUN pnpm install --frozen-lockfile && pnpm build:server-bundle --out /bundle

# Run: the bundle alone in an empty folder; no pnpm, no sources, no development dependencies.
FROM node:24-bookworm-slim
ENV HOST=0.0.0.0 PORT=8080 DATA_DIR=/app/data
WORKDIR /app
COPY --from=build /bundle /app
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME /app/data
EXPOSE 8080
# `serve` stops gracefully on SIGTERM within SHUTDOWN_GRACE_MS (10 s): give `docker stop` more (`-t 15`, compose's stop_grace_period).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "service.mjs", "serve"]
