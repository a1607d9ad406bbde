#!/bin/sh
# Assembles, in the folder it is given, the root file system the apps' images run on (docker/apps.Dockerfile's
# `runtime` stage, FROM scratch): the node binary of the image this runs in and the shared libraries it and
# the native addons (*.node) of the node_modules folder it is given link (libc, libstdc++, libgcc_s, libm, the
# loader; librt for @node-rs/crc32), as ldd finds them; CA certificates when the image has them; passwd and
# group entries for root and `node` (uid 1000). No shell, npm, package manager or Perl: what an image does not
# hold cannot be used in it. Written for any Node.js image with `ldd` (tried on Debian's glibc; musl's ldd
# prints the same form). It fails the build when node, or one of those addons, does not load in the root.
#   runtime-root.sh <root> <node_modules folder>
set -eu
root=$1
modules=$2
node=$(command -v node)
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/home/node" "$root/app" "$root/tmp"
cp -L "$node" "$root/usr/local/bin/node"
# Addons built for another platform (prebuilt binaries some packages ship for all) are left to their packages:
# ldd refuses them, and they are neither loaded here nor checked below.
addons=$(find "$modules" -type f -name '*.node' -exec sh -c 'ldd "$1" >/dev/null 2>&1' sh {} \; -print)
for binary in "$node" $addons; do
  for library in $(ldd "$binary" | grep -o '/[^ ]*'); do
    [ -e "$root$library" ] && continue
    mkdir -p "$root$(dirname "$library")"
    cp -L "$library" "$root$library"
  done
done
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
fi
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'node:x:1000:1000:node:/home/node:/sbin/nologin' \
  >"$root/etc/passwd"
printf '%s\n' 'root:x:0:' 'node:x:1000:' >"$root/etc/group"
# Names from /etc/hosts before DNS (without this file glibc asks DNS first, and `localhost` may not resolve).
printf '%s\n' 'passwd: files' 'group: files' 'hosts: files dns' >"$root/etc/nsswitch.conf"
chmod 1777 "$root/tmp"
chown 1000:1000 "$root/home/node"
# The root works: node starts in it and loads each addon, with nothing of this image (the addons are copied in
# for the check only).
check=$root/tmp/addons
mkdir -p "$check"
for addon in $addons; do cp "$addon" "$check/$(echo "$addon" | tr / _)"; done
chroot "$root" /usr/local/bin/node -e '
  const dir = "/tmp/addons";
  for (const file of require("node:fs").readdirSync(dir)) require(`${dir}/${file}`);
  require("node:crypto").randomUUID();'
rm -rf "$check"
