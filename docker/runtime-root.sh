#!/bin/sh
# Assembles, in the folder it is given, the root file system the apps' images run on (docker/apps.Dockerfile's
# `runtime` stage, FROM scratch): the node binary of the image this runs in and the shared libraries it links
# (libc, libstdc++, libgcc_s, libm and the loader, as ldd finds them), CA certificates when the image has
# them, and passwd/group entries for root and `node` (uid 1000). No shell, npm, package manager or Perl:
# what an image does not hold cannot be used in it. Written for any Node.js image with `ldd` (tried on
# Debian's glibc; musl's ldd prints the same form), and it fails the build when node does not start.
set -eu
root=$1
node=$(command -v node)
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/home/node" "$root/app" "$root/tmp"
cp -L "$node" "$root/usr/local/bin/node"
for library in $(ldd "$node" | grep -o '/[^ ]*'); do
  mkdir -p "$root$(dirname "$library")"
  cp -L "$library" "$root$library"
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
# The root works: node starts in it, without anything of this image.
chroot "$root" /usr/local/bin/node -e 'require("node:crypto").randomUUID()'
