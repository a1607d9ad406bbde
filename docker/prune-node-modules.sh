#!/bin/sh
# Trims production node_modules (after `npm prune --omit=dev`) to what Node.js loads at run time, for
# docker/apps.Dockerfile: the demo's image layer of node_modules went from 121 MB to 39 MB, 2026-12-07.
#   prune-node-modules.sh <node_modules folder>
set -eu
cd "$1"
# The TypeScript toolchain: typeorm depends on ts-node for its CLI's .ts entry points, which no image runs.
rm -rf typescript ts-node @types @cspotcode @tsconfig .bin
# Builds for browsers (package.json's `browser` field), which Node.js never loads.
rm -rf typeorm/browser
# Type declarations, source maps, TypeScript sources (Node.js strips no types under node_modules), docs.
find . -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o -name '*.tsbuildinfo' \
  -o -name '*.md' -o -name '*.markdown' \) -delete
