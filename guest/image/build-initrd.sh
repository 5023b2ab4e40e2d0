#!/bin/bash
# Build /usr/share/ernic/initrd.img: busybox-static, the modules needed to mount
# a virtio-9p root (plus overlayfs), and /init (image/initrd-init).
# Runs inside the image build (Dockerfile).
set -euo pipefail

out=/usr/share/ernic/initrd.img
ver=$(cd /lib/modules && ls)
# What /init needs (configfs too: nvmet and the RDMA CM use it). modprobe
# resolves the dependencies (netfs, 9pnet, ...) and says "builtin" for anything
# compiled into the kernel (virtio_pci in Debian's config).
wanted=(virtio_pci 9pnet_virtio 9p overlay configfs)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,dev,proc,sys,lower,upper,newroot,lib/modules}

busybox=$(command -v busybox)
if readelf -l "$busybox" | grep -q 'Requesting program interpreter'; then
    echo "$busybox is dynamically linked: need busybox-static" >&2
    exit 1
fi
install -m 0755 "$busybox" "$work/bin/busybox"
for applet in $("$work/bin/busybox" --list); do
    [[ $applet == busybox ]] || ln -s busybox "$work/bin/$applet"
done

# The kernel opens /dev/console for init before /init can mount devtmpfs.
mknod -m 0600 "$work/dev/console" c 5 1

# Modules in load order, decompressed (busybox insmod + a kernel without
# in-kernel decompression would not take .ko.xz/.ko.zst).
: >"$work/modules.list"
: >"$work/modules.builtin"
declare -A seen=()
while read -r kind path _; do
    case $kind in
        builtin) echo "$path" >>"$work/modules.builtin" ;;
        insmod)
            name=$(basename "$path"); name=${name%%.ko*}
            [[ -n ${seen[$name]:-} ]] && continue
            seen[$name]=1
            case $path in
                *.ko.xz) xz -dc "$path" ;;
                *.ko.zst) zstd -qdc "$path" ;;
                *.ko.gz) gzip -dc "$path" ;;
                *.ko) cat "$path" ;;
                *) echo "unexpected module file $path" >&2; exit 1 ;;
            esac >"$work/lib/modules/$name.ko"
            echo "$name" >>"$work/modules.list"
            ;;
        *) echo "unexpected modprobe output: $kind $path" >&2; exit 1 ;;
    esac
done < <(modprobe -S "$ver" --show-depends -a "${wanted[@]}")

install -m 0755 /usr/share/ernic/initrd-init "$work/init"   # mode set here on purpose

(cd "$work" && find . -mindepth 1 | LC_ALL=C sort | ./bin/busybox cpio -o -H newc 2>/dev/null) \
    | gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
echo "initrd: $(stat -c %s "$out") bytes; modules: $(tr '\n' ' ' <"$work/modules.list")"
echo "initrd: built in: $(tr '\n' ' ' <"$work/modules.builtin")"
cp "$work/modules.list" /usr/share/ernic/initrd.modules
