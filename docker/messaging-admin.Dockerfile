# The library's admin CLI (`messaging topology | dlq | approver | db`), run from source with tsx.
# Build from the repository root: docker build -f docker/messaging-admin.Dockerfile .
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY libs ./libs
COPY docker/topology.json ./topology.json
USER node
ENTRYPOINT ["npx", "tsx", "libs/messaging/src/cli/main.ts"]
