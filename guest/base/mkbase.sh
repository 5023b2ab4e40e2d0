#!/bin/bash
# Build the Debian sid minbase root filesystem tarball that becomes the
# ernic-sid-base image (no container registry is reachable, so this is our FROM).
#
#   mkbase.sh WORKDIR OUTPUT.tar
#
# build.sh caches OUTPUT.tar by the sha256 of this file: anything that should
# change the base belongs in this file.
set -euo pipefail

work=${1:?usage: mkbase.sh WORKDIR OUTPUT.tar}
out=${2:?usage: mkbase.sh WORKDIR OUTPUT.tar}
mirror=${ERNIC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=sid

rm -rf "$work"
mkdir -p "$work"

# minbase: essential + apt only; everything else comes from the Dockerfile.
debootstrap --variant=minbase "$suite" "$work" "$mirror"

# Sid's Release file carries a Valid-Until that can look expired against this
# machine's clock; apt would refuse it.
cat >"$work/etc/apt/apt.conf.d/90ernic" <<'CONF'
// ernic guest image: see guest/base/mkbase.sh
Acquire::Check-Valid-Until "false";
Acquire::Languages "none";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Dpkg::Use-Pty "false";
CONF

# Keep the image small: no documentation, man pages or translations.
cat >"$work/etc/dpkg/dpkg.cfg.d/90ernic-nodoc" <<'CONF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
path-exclude=/usr/share/lintian/*
CONF

printf 'deb %s %s main\n' "$mirror" "$suite" >"$work/etc/apt/sources.list"

# Nothing from the build belongs in the image: apt caches, lists, /dev nodes
# (docker provides /dev), the machine id.
rm -rf "$work"/var/cache/apt/archives/*.deb "$work"/var/lib/apt/lists/* "$work"/var/log/*.log
rm -rf "${work:?}"/dev/* "${work:?}"/proc/* "${work:?}"/sys/* "${work:?}"/tmp/*
: >"$work/etc/machine-id"

tar --numeric-owner --xattrs -C "$work" -cf "$out.tmp" .
mv "$out.tmp" "$out"
rm -rf "$work"
