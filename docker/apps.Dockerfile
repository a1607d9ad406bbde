# The demo's images, from one build: post-service, subscribe-service, the ops console and the admin CLI
# (`messaging topology | dlq | approver | db`). Build one with its target, from the repository root:
#   docker build -f docker/apps.Dockerfile --target post-service -t post-service .
# (docker/compose.yml does). NODE_IMAGE: any Node.js 20.19+ image with npm and ldd (tried: Debian's); the
# default is the active LTS. The build runs on it; the images run on a root of their own FROM scratch with
# only its node binary and the libraries it and the native addons need (no shell, npm or package manager),
# plus the production dependencies trimmed to what Node.js loads (docker/prune-node-modules.sh). On our
# stand-in for node:24-bookworm-slim each image is 173 MB, 172 MB of it layers the four share (the root
# 133 MB, of which the node binary 127; node_modules 39), against 345 MB when they ran on that image with all
# production dependencies (2026-12-07). Each image runs as the unprivileged `node` user (uid 1000), answers its
# health check on /health, and stops gracefully on SIGTERM (Nest's shutdown hooks: the relay, consumers and
# connections settle before the process ends; node is PID 1 and handles the signal itself).
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/messaging/package.json libs/messaging/
# --ignore-scripts: the workspace's `prepare` builds the library, whose sources come next.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY libs ./libs
COPY apps ./apps
RUN npm run -s build:lib \
 && npx nest build post-service && npx nest build subscribe-service && npx nest build ops-console \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf libs/messaging/src libs/messaging/node_modules
# The images run the compiled JavaScript only: no TypeScript, type declarations or source maps.
COPY docker/prune-node-modules.sh /usr/local/bin/
RUN prune-node-modules.sh node_modules \
 && find dist libs/messaging/dist -type f \
      \( -name '*.d.ts' -o -name '*.map' -o -name '*.tsbuildinfo' \) -delete

# The root the apps run on, from NODE_IMAGE: its node binary and the libraries it and the dependencies'
# native addons link, CA certificates, passwd entries (docker/runtime-root.sh). Its layer changes only when
# NODE_IMAGE or those addons do.
FROM ${NODE_IMAGE} AS runtime-root
COPY docker/runtime-root.sh /usr/local/bin/
COPY --from=build /app/node_modules /app/node_modules
RUN runtime-root.sh /runtime-root /app/node_modules

# What every app image has, in layers the four images share: that root, the production dependencies and the
# library's build, owned by root, run as uid 1000 (`node`; numeric, which a runAsNonRoot policy can check).
FROM scratch AS runtime
COPY --from=runtime-root /runtime-root /
ENV PATH=/usr/local/bin NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/libs/messaging/package.json ./libs/messaging/
COPY --from=build /app/libs/messaging/dist ./libs/messaging/dist
USER 1000:1000

FROM runtime AS post-service
COPY --from=build /app/dist/apps/post-service ./dist
ENV PORT=3000
EXPOSE 3000
HEALTHCHECK --interval=5s --timeout=3s --retries=20 \
  CMD ["node", "-e", "require('http').get('http://127.0.0.1:' + process.env.PORT + '/health', (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1))"]
CMD ["node", "dist/apps/post-service/src/main.js"]

FROM runtime AS subscribe-service
COPY --from=build /app/dist/apps/subscribe-service ./dist
ENV PORT=3001
EXPOSE 3001
HEALTHCHECK --interval=5s --timeout=3s --retries=20 \
  CMD ["node", "-e", "require('http').get('http://127.0.0.1:' + process.env.PORT + '/health', (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1))"]
CMD ["node", "dist/apps/subscribe-service/src/main.js"]

FROM runtime AS ops-console
COPY --from=build /app/dist/apps/ops-console ./dist
ENV PORT=3002 HOST=0.0.0.0
EXPOSE 3002
HEALTHCHECK --interval=5s --timeout=3s --retries=20 \
  CMD ["node", "-e", "require('http').get('http://127.0.0.1:' + process.env.PORT + '/health/live', (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1))"]
CMD ["node", "dist/apps/ops-console/src/main.js"]

# The admin CLI, as `npx nest-messaging` runs it in an application (the library's built bin).
FROM runtime AS messaging-admin
COPY docker/topology.json ./topology.json
ENTRYPOINT ["node", "libs/messaging/dist/cli/main.js"]
