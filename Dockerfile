# syntax=docker/dockerfile:1
# The locus image: the API server (dist/cmd/server.js, the default), the operator
# (dist/cmd/operator.js) and the admin CLI (dist/cmd/cli.js), run as a non-root user.

# 1. Build: compile TypeScript and the native addon (better-sqlite3), then drop dev dependencies.
FROM node:20-bookworm AS build
WORKDIR /src
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 g++ make && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Dependencies first (a layer of their own); `prepare` would build before the sources are here,
# so scripts are skipped and the one native addon is built explicitly.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3
COPY scripts ./scripts
COPY tsconfig.json ./
COPY cmd ./cmd
COPY internal ./internal
COPY test ./test
# The commit built, for locus_build_info and /v2/version (.git is not in the build context):
# docker build --build-arg LOCUS_BUILD_REVISION=$(git rev-parse --short=12 HEAD) .
ARG LOCUS_BUILD_REVISION=unknown
RUN LOCUS_BUILD_REVISION="$LOCUS_BUILD_REVISION" npm run build && npm prune --omit=dev --no-audit --no-fund

# 2. Run: only what the processes need (test/integration/runtime-image.test.ts lays out the
# files these COPY lines name and starts the server, the operator and the CLI from them).
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/cmd ./dist/cmd
COPY --from=build /src/dist/internal ./dist/internal
# The version, build date and revision every process reads at start (internal/build-info.ts).
COPY --from=build /src/dist/build-info.json ./dist/build-info.json
# A fixed non-root user (the chart's securityContext runs as it too); a writable data
# directory for embedded mode (LOCUS_STORE=sqlite:/data/locus.db).
RUN groupadd --gid 10001 locus && useradd --uid 10001 --gid locus --no-create-home --shell /usr/sbin/nologin locus \
  && mkdir -p /data && chown locus:locus /data
USER 10001:10001
EXPOSE 8080 7070
ENTRYPOINT ["node", "--max-semi-space-size=32"]
CMD ["dist/cmd/server.js"]
