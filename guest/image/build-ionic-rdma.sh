#!/bin/bash
# Build ionic_rdma.ko out of tree from Debian's linux-source-<series> tarball
# against the installed linux-headers, install it under /lib/modules/<ver>/extra
# and run depmod. Runs inside the image build (Dockerfile).
#
#   build-ionic-rdma.sh SERIES        e.g. 7.2
#
# Patches: /usr/share/ernic/patches/ionic_rdma/*.patch (from guest/patches/) are
# applied in name order with `patch -p1` at the kernel source root before the
# build. Only drivers/infiniband/hw/ionic and drivers/net/ethernet/pensando/ionic
# are extracted, so a patch may touch (or create) files in those two directories.
set -euo pipefail

series=${1:?usage: build-ionic-rdma.sh KERNEL_SERIES}
tarball=/usr/src/linux-source-$series.tar.xz
patchdir=/usr/share/ernic/patches/ionic_rdma
hdrdir=/usr/share/ernic/headers

# Exactly one kernel is installed; its release names the modules and headers.
mapfile -t releases < <(cd /lib/modules && ls)
if ((${#releases[@]} != 1)); then
    echo "expected exactly one kernel under /lib/modules, found: ${releases[*]:-none}" >&2
    exit 1
fi
ver=${releases[0]}
case $ver in
    "$series".*) ;;
    *) echo "kernel $ver does not belong to linux-source-$series" >&2; exit 1 ;;
esac
if [[ ! -e /lib/modules/$ver/build/Makefile ]]; then
    echo "linux-headers-$ver is not installed (no /lib/modules/$ver/build)" >&2
    exit 1
fi
dpkg-query -W "linux-headers-$ver" >/dev/null

# A fixed path: it ends up in the module (__FILE__ in WARN_ON etc.), so a
# random one would make every build of the same sources differ.
work=/usr/src/ernic-ionic-rdma
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
top=linux-source-$series
ibdir=drivers/infiniband/hw/ionic
ethdir=drivers/net/ethernet/pensando/ionic

echo "ionic_rdma: extracting $ibdir and $ethdir from $tarball"
tar -C "$work" -xf "$tarball" "$top/$ibdir" "$top/$ethdir"
src=$work/$top

# The driver/firmware interface as the kernel defines it (unpatched), for reference.
install -d "$hdrdir"
install -m 0644 "$src/$ethdir/ionic_if.h" "$src/$ibdir/ionic_fw.h" "$hdrdir/"

shopt -s nullglob
patches=("$patchdir"/*.patch)
shopt -u nullglob
: >"$work/applied"
for p in "${patches[@]}"; do   # glob expansion is sorted, i.e. name order
    echo "ionic_rdma: applying $(basename "$p")"
    patch -p1 --batch --forward -d "$src" <"$p"
    printf '%s %s\n' "$(basename "$p")" "$(sha256sum <"$p" | cut -c1-16)" >>"$work/applied"
done
install -m 0644 "$work/applied" /usr/share/ernic/ionic_rdma.patches

# The driver's Makefile adds -I$(srctree)/drivers/net/ethernet/pensando/ionic,
# but srctree is the headers package here, which has no driver sources: point
# the compiler at the extracted copy instead. Module.symvers of the headers
# provides the ib_core and ionic (NET_IONIC namespace) exports.
# CONFIG_MODULE_SRCVERSION_ALL=y makes modpost record a srcversion (Debian
# leaves it unset, and the driver has no MODULE_VERSION), so the manifest can
# identify exactly which sources the module was built from.
echo "ionic_rdma: building against /lib/modules/$ver/build"
make -s -C "/lib/modules/$ver/build" M="$src/$ibdir" \
    CONFIG_INFINIBAND_IONIC=m CONFIG_MODULE_SRCVERSION_ALL=y KCFLAGS="-I$src/$ethdir" -j"$(nproc)" modules

install -D -m 0644 "$src/$ibdir/ionic_rdma.ko" "/lib/modules/$ver/extra/ionic_rdma.ko"
depmod -a "$ver"
modinfo -k "$ver" ionic_rdma | grep -E '^(filename|srcversion|depends|vermagic|alias):'
