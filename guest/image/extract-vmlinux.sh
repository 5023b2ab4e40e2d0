#!/bin/bash
# Extract the uncompressed ELF vmlinux from the installed bzImage into
# /usr/share/ernic/vmlinux. QEMU boots an ELF kernel with a PVH entry note
# directly (-kernel vmlinux): no real-mode setup code and no in-guest
# decompression, which under TCG saves about 2 s per boot. ernic-vm falls back
# to /boot/vmlinuz-* when the file is absent. Runs inside the image build.
set -euo pipefail

out=/usr/share/ernic/vmlinux
bz=$(ls /boot/vmlinuz-*)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

# Like the kernel's scripts/extract-vmlinux: find the payload by its
# compression magic and decompress from there (trailing data makes the
# decompressor complain, which is expected).
try() { # try MAGIC (printf %b escapes) DECOMPRESSOR...
    local magic=$1 off
    shift
    for off in $(LC_ALL=C grep -aboF "$(printf '%b' "$magic")" "$bz" | cut -d: -f1); do
        tail -c +$((off + 1)) "$bz" | "$@" >"$tmp" 2>/dev/null || true
        if [[ $(head -c 4 "$tmp" | od -An -tx1 | tr -d ' ') == 7f454c46 ]]; then
            return 0
        fi
    done
    return 1
}
if try '\x28\xb5\x2f\xfd' zstd -dc || try '\xfd7zXZ\x00' xz -dc || try '\x1f\x8b\x08' gzip -dc; then
    # XEN_ELFNOTE_PHYS32_ENTRY (type 0x12) is what QEMU needs for PVH.
    if readelf -n "$tmp" | grep -Eq 'Xen[[:space:]]+0x[0-9a-f]+[[:space:]]+(Unknown note type: \(0x00000012\)|.*PHYS32_ENTRY)'; then
        install -m 0644 "$tmp" "$out"
        echo "vmlinux: $(stat -c %s "$out") bytes from $bz (PVH entry present)"
        exit 0
    fi
    echo "vmlinux: $bz has no PVH entry note; ernic-vm will boot the bzImage" >&2
else
    echo "vmlinux: could not extract an ELF kernel from $bz; ernic-vm will boot the bzImage" >&2
fi
rm -f "$out"
