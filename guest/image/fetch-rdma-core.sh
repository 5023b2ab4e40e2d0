#!/bin/bash
# Fetch the upstream source of the installed rdma-core (the .orig tarball that
# Debian's rdma-core source package is built from), check it against the
# SHA-256 in sid's Sources index, and install what libionic's build needs.
# Runs inside the image build (Dockerfile), before build-libionic.sh.
#
# Only the .orig tarball is used: it is what the binary packages were built
# from (Debian's own patches do not touch providers/ionic), and this mirror
# serves it even when it lacks the source package's .dsc.
set -euo pipefail

srcver=$(dpkg-query -W -f='${source:Version}' ibverbs-providers)   # e.g. 65.0-1.1
upver=${srcver%-*}                                                  # e.g. 65.0
orig=rdma-core_${upver}.orig.tar.gz
out=/usr/src/$orig

echo "deb-src http://deb.debian.org/debian sid main" >/etc/apt/sources.list.d/ernic-src.list
apt-get update -q
# The source record of exactly the installed version: its directory and the orig's checksum.
record=$(apt-cache showsrc rdma-core | awk -v v="$srcver" 'BEGIN{RS=""} index($0, "\nVersion: " v "\n") {print; exit}')
[[ -n $record ]] || { echo "no source record for rdma-core $srcver in sid" >&2; exit 1; }
dir=$(sed -n 's/^Directory: //p' <<<"$record" | head -n1)
sum=$(sed -n '/^Checksums-Sha256:/,/^[A-Z]/p' <<<"$record" | awk -v f="$orig" '$3 == f {print $1; exit}')
[[ -n $dir && -n $sum ]] || { echo "no $orig in the source record of rdma-core $srcver" >&2; exit 1; }

curl -fsS -o "$out" "http://deb.debian.org/debian/$dir/$orig"
echo "$sum  $out" | sha256sum -c -
echo "$orig $sum" >/usr/src/rdma-core.orig

apt-get install -y -q --no-install-recommends cmake ninja-build pkgconf libnl-3-dev libnl-route-3-dev libudev-dev python3
rm -f /etc/apt/sources.list.d/ernic-src.list
apt-get clean
rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log
