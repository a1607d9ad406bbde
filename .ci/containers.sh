#!/usr/bin/env bash
# CI step (issue 44): the path of a user with Docker, on a machine without Docker and without an image
# registry. It brings up podman's Docker API when no engine runs, builds stand-ins for the official images
# (docker/images/build.sh), runs `docker compose up` of the demo stack and drives the blog post's scenarios
# against it (outage and SIGTERM included: tools/demo/compose-demo.ts), then runs integration suites through
# testcontainers (TEST_INFRA=containers). Each part prints its time.
#   .ci/containers.sh [all|compose|testcontainers|prepare]      (default: all)
# `prepare` installs the packages and builds the images only, the demo's included (no engine, no stack):
# .ci/run starts it in the background while the test suites run, and the step proper finds them built.
# Environment: CONTAINER_SUITES, the integration suites (Jest path patterns) of the testcontainers run.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
root=$PWD
state=$(mktemp -d /tmp/ci-containers.XXXXXX)
pids=()
stack_up=false
log() { echo "[containers] $*" >&2; }
timed() { # name command...: runs it and prints how long it took
  local name=$1 begun=$SECONDS
  shift
  "$@"
  log "$name: $((SECONDS - begun)) s"
}

cleanup() {
  local code=$?
  if $stack_up; then
    docker compose -f docker/compose.yml logs --no-color >"$state/compose.log" 2>&1 || true
    docker compose -f docker/compose.yml down -v -t 10 >/dev/null 2>&1 || true
    if [ $code -ne 0 ]; then
      # The services' and one-shot jobs' lines first (the brokers' and database's boot logs drown them).
      log "the stack's log, apart from the brokers and the database (end):"
      grep -Ev '^(rabbitmq|kafka|postgres)_1 ' "$state/compose.log" | tail -80
      log "the stack's log (end):"
      tail -30 "$state/compose.log"
    fi
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$state"
  exit $code
}
trap cleanup EXIT

# Debian's podman with runc (crun refuses this machine's hybrid cgroup layout), compose v1, debootstrap.
# iptables: netavark sets up the containers' network with it (it is only a recommendation of the packages).
missing=()
for package in podman runc netavark aardvark-dns iptables debootstrap docker-compose; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian's ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# Podman's settings for this kind of machine (runc, cgroupfs, explicit ulimits), for every podman below.
export CONTAINERS_CONF=$root/docker/podman/containers.conf
if [ "$what" = prepare ]; then
  timed "images (docker/images/build.sh)" docker/images/build.sh 24 >"$state/images.env"
  # The demo's images too, as docker/compose.yml builds them (same file, targets, argument and tags): podman
  # keeps the layers, and `docker compose build` in the step proper finds them (its own build is then a
  # check of the cache, under a minute here, against 11 min cold).
  node_image=$(sed -n 's/^NODE_IMAGE=//p' "$state/images.env")
  for target in messaging-admin post-service subscribe-service ops-console; do
    timed "podman build --target $target" podman build --quiet --format docker --layers \
      -f docker/apps.Dockerfile --target "$target" --build-arg "NODE_IMAGE=$node_image" \
      -t "nest-reliable-messaging/$target" . >/dev/null
  done
  exit 0
fi
if ! docker info >/dev/null 2>&1; then
  export DOCKER_HOST=unix://$state/podman.sock
  log "no container engine answers: starting podman's Docker API on $DOCKER_HOST"
  podman system service --time=0 "$DOCKER_HOST" >"$state/podman-service.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 50); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
  docker info >/dev/null
fi
# Without systemd, podman runs no health checks by itself: run those of the containers not yet healthy.
if [ ! -d /run/systemd/system ]; then
  (while sleep 2; do
    for id in $(podman ps -q --filter health=starting) $(podman ps -q --filter health=unhealthy); do
      podman healthcheck run "$id" >/dev/null 2>&1 || true
    done
  done) &
  pids+=($!)
fi
# `docker compose`: Compose v1 behind the CLI plugin interface when the machine has no v2 plugin.
if ! docker compose version >/dev/null 2>&1; then
  export DOCKER_CONFIG=$state/docker
  mkdir -p "$DOCKER_CONFIG/cli-plugins"
  ln -s "$root/docker/podman/docker-compose-plugin" "$DOCKER_CONFIG/cli-plugins/docker-compose"
fi

# The services, the scenario driver and Jest run on the active LTS (Node 24, from the npm registry).
node24=$(npx -y tsx -e "require('./tools/infra/tool-cache').nodeBinary(24).then((n) => console.log(n))")
export PATH=$(dirname "$node24"):$PATH

timed "images (docker/images/build.sh)" docker/images/build.sh 24 >"$state/images.env"
set -a
# shellcheck disable=SC1091
. "$state/images.env"
set +a
cat "$state/images.env"

if [ "$what" = all ] || [ "$what" = compose ]; then
  # Free ports on this machine: the standard ones are the machine's own services'.
  read -r POSTGRES_PORT KAFKA_PORT RABBITMQ_PORT RABBITMQ_MANAGEMENT_PORT POST_SERVICE_PORT \
    SUBSCRIBE_SERVICE_PORT OPS_CONSOLE_PORT < <(npx tsx -e "
      const { freePort } = require('./tools/infra/ports');
      (async () => { const p = new Set(); while (p.size < 7) p.add(await freePort()); console.log([...p].join(' ')); })();")
  export POSTGRES_PORT KAFKA_PORT RABBITMQ_PORT RABBITMQ_MANAGEMENT_PORT POST_SERVICE_PORT SUBSCRIBE_SERVICE_PORT \
    OPS_CONSOLE_PORT
  stack_up=true
  timed "docker compose build" docker compose -f docker/compose.yml build --quiet
  # The images' trimmed node_modules and native libraries: every dependency still loads (the four share them).
  docker run --rm --no-healthcheck \
    -v "$root/docker/check-dependencies-load.cjs:/app/check-dependencies-load.cjs:ro" \
    nest-reliable-messaging/post-service node /app/check-dependencies-load.cjs
  timed "docker compose up" docker compose -f docker/compose.yml up -d --quiet-pull
  timed "the blog scenarios against the stack" npx tsx tools/demo/compose-demo.ts
  docker compose -f docker/compose.yml images 2>/dev/null || true
  # The demo's images stay small and unprivileged (issue 44): at most 200 MB each (173 MB on 2026-12-07, most
  # of it the node binary; 345 MB when they ran on the Node.js image), a user that is not root.
  for image in post-service subscribe-service ops-console messaging-admin; do
    read -r size user < <(podman image inspect --format '{{.Size}} {{.Config.User}}' \
      "nest-reliable-messaging/$image")
    log "$image: $size bytes, user $user"
    [ "$size" -le 200000000 ] || { log "$image is over its budget of 200 MB"; exit 1; }
    case $user in '' | 0 | 0:* | root | root:*) log "$image runs as root"; exit 1 ;; esac
  done
  timed "docker compose down" docker compose -f docker/compose.yml down -v -t 10 >/dev/null
  stack_up=false
fi

if [ "$what" = all ] || [ "$what" = testcontainers ]; then
  # A representative subset: each of the four services' smoke test, the outbox's atomicity, the Kafka consumer
  # and its retries, the inbox's batch records, and real InnoDB deadlocks on both databases. Suites that force
  # RabbitMQ connections closed or use vhosts (rabbitmqctl on this machine's node) are left out: they would
  # not reach the container's node.
  suites=${CONTAINER_SUITES:-test/integration/infra/postgres test/integration/infra/kafka.test test/integration/infra/rabbitmq test/integration/outbox/outbox-atomicity test/integration/consumers/kafka-consumer test/integration/retry/kafka-retry test/integration/consumers/inbox-batch-record test/integration/consumers/swallowed-database-error}
  # shellcheck disable=SC2086
  TEST_INFRA=containers TESTCONTAINERS_RYUK_DISABLED=true \
    timed "integration suites through testcontainers" \
    npx tsx tools/test/run-jest.ts --selectProjects integration --maxWorkers=2 $suites
fi
