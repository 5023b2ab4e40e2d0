#!/bin/bash
# Build rdma-core's ionic provider (libionic) from the upstream source of the
# installed rdma-core with /usr/share/ernic/patches/libionic/*.patch applied
# (name order, patch -p1 at the source root), and install it in place of the
# packaged library (dpkg-divert keeps Debian's copy as *.distrib). With no
# patches, nothing is built and the packaged library stays.
# Runs inside the image build (Dockerfile), after fetch-rdma-core.sh.
set -euo pipefail

patchdir=/usr/share/ernic/patches/libionic
shopt -s nullglob
patches=("$patchdir"/*.patch)
shopt -u nullglob
: >/usr/share/ernic/libionic.patches
if ((${#patches[@]} == 0)); then
    echo "libionic: no patches, keeping the packaged library"
    exit 0
fi

read -r orig _ </usr/src/rdma-core.orig
# The packaged library this replaces (its real file, not the provider symlink).
lib=$(dpkg-query -L ibverbs-providers | grep -E '/libionic\.so\.[0-9.]+$' | sort | tail -n1)
[[ -f $lib ]] || { echo "libionic: no packaged libionic.so.* found" >&2; exit 1; }

work=/usr/src/ernic-rdma-core   # fixed path: it ends up in the debug info
rm -rf "$work"
mkdir -p "$work/src"
trap 'rm -rf "$work"' EXIT
tar -C "$work/src" --strip-components=1 -xzf "/usr/src/$orig"

for p in "${patches[@]}"; do
    echo "libionic: applying $(basename "$p")"
    patch -p1 --batch --forward -d "$work/src" <"$p"
    printf '%s %s\n' "$(basename "$p")" "$(sha256sum <"$p" | cut -c1-16)" >>/usr/share/ernic/libionic.patches
done

# Only the ionic target (and the libibverbs it links against) is built. The
# provider checks libibverbs' private ABI (IBVERBS_PRIVATE_<n>) at load time,
# which matches because the source is the installed version's.
cmake -S "$work/src" -B "$work/build" -GNinja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 -DENABLE_STATIC=0 >"$work/cmake.log" 2>&1 || { tail -n 40 "$work/cmake.log"; exit 1; }
ninja -C "$work/build" -j"$(nproc)" ionic
built=$(readlink -f "$work/build/lib/libionic.so.1")
[[ $(basename "$built") == $(basename "$lib") ]] || {
    echo "libionic: built $(basename "$built"), packaged $(basename "$lib")" >&2; exit 1; }

if ! dpkg-divert --list "$lib" | grep -q .; then
    dpkg-divert --local --rename --divert "$lib.distrib" --add "$lib"
fi
install -m 0644 "$built" "$lib"
strip --strip-unneeded "$lib"
echo "libionic: installed $lib (Debian's copy: $lib.distrib)"
