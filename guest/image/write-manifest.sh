#!/bin/bash
# Write /usr/share/ernic/manifest.txt: exact versions of what the image contains.
# Runs as the last step of the image build (Dockerfile).
set -euo pipefail

input_hash=${1:-unknown}
out=/usr/share/ernic/manifest.txt
ver=$(cd /lib/modules && ls)
ko=/lib/modules/$ver/extra/ionic_rdma.ko

pkgs=(
    qemu-system-x86 qemu-system-common seabios
    linux-image-amd64 "linux-image-$ver" "linux-headers-$ver" linux-source-"${ver%.*}"
    rdma-core ibverbs-providers libibverbs1 librdmacm1t64 ibverbs-utils rdmacm-utils
    perftest qperf python3-pyverbs
    nvme-cli fio iproute2 ethtool pciutils iperf3 kmod busybox-static gcc make
)
pkgver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo not-installed; }

{
    echo "# ernic-guest image manifest"
    echo "image.input_hash: $input_hash"
    echo "image.built: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "debian.sid_release_date: $(cat /usr/share/ernic/sid-release-date)"
    echo "kernel.release: $ver"
    echo "kernel.image: $(ls /boot/vmlinuz-*)"
    if [[ -f /usr/share/ernic/vmlinux ]]; then
        echo "kernel.boot: /usr/share/ernic/vmlinux (PVH, extracted from the image above)"
    else
        echo "kernel.boot: $(ls /boot/vmlinuz-*)"
    fi
    echo "qemu.version: $(qemu-system-x86_64 --version | head -n1)"
    echo "qemu.vfio_user_pci: $(qemu-system-x86_64 -device help | grep -q '"vfio-user-pci"' && echo yes || echo NO)"
    echo "ionic_rdma.path: $ko"
    echo "ionic_rdma.srcversion: $(modinfo -F srcversion "$ko")"
    echo "ionic_rdma.vermagic: $(modinfo -F vermagic "$ko")"
    echo "ionic_rdma.depends: $(modinfo -F depends "$ko")"
    echo "ionic_rdma.sha256: $(sha256sum <"$ko" | cut -d' ' -f1)"
    if [[ -s /usr/share/ernic/ionic_rdma.patches ]]; then
        echo "ionic_rdma.patches: $(tr '\n' ';' </usr/share/ernic/ionic_rdma.patches | sed 's/;$//; s/;/; /g')"
    else
        echo "ionic_rdma.patches: none"
    fi
    if [[ -s /usr/share/ernic/libionic.patches ]]; then
        lib=$(dpkg-query -L ibverbs-providers | grep -E '/libionic\.so\.[0-9.]+$' | sort | tail -n1)
        echo "libionic.path: $lib (rebuilt; Debian's copy diverted to $lib.distrib)"
        echo "libionic.sha256: $(sha256sum <"$lib" | cut -d' ' -f1)"
        echo "libionic.source: $(cat /usr/src/rdma-core.orig)"
        echo "libionic.patches: $(tr '\n' ';' </usr/share/ernic/libionic.patches | sed 's/;$//; s/;/; /g')"
    else
        echo "libionic.patches: none (packaged library)"
    fi
    echo "ionic.path: $(modinfo -k "$ver" -F filename ionic)"
    echo "initrd.modules: $(tr '\n' ' ' </usr/share/ernic/initrd.modules | sed 's/ $//')"
    echo "initrd.bytes: $(stat -c %s /usr/share/ernic/initrd.img)"
    for p in "${pkgs[@]}"; do
        echo "pkg.$p: $(pkgver "$p")"
    done
} >"$out"
cat "$out"
