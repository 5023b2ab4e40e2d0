#!/bin/bash
# Build the ernic real-guest container image, cached.
#
#   guest/build.sh            build (or say "up to date") ernic-guest:<hash12> + :latest
#   ERNIC_GUEST_VERBOSE=1     show the full docker build output
#   ERNIC_CACHE_DIR=DIR       where the debootstrap tarball and build logs are kept
#                             (default /var/cache/ernic)
#
# The tag's hash covers every file under guest/ except *.md (see lib.sh). The
# debootstrap tarball is cached separately by the hash of base/mkbase.sh, and
# docker's layer cache keeps the package layer when only later steps change.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

# Progress: every stage line says how long the build has run so far.
t0=$(date +%s)
elapsed() { echo "$(($(date +%s) - t0)) s"; }
step() { printf '[guest] stage %s: %s (elapsed %s)\n' "$1" "$2" "$(elapsed)"; }

ensure_docker || exit $?

hash=$(guest_input_hash)
tag="$ERNIC_GUEST_REPO:${hash:0:12}"

up_to_date() {
    if docker image inspect "$tag" >/dev/null 2>&1; then
        docker tag "$tag" "$ERNIC_GUEST_REPO:latest"
        echo "[guest] $tag is up to date (tagged $ERNIC_GUEST_REPO:latest)"
        return 0
    fi
    return 1
}
up_to_date && exit 0

# Building needs root (debootstrap, chroot) and debootstrap itself.
missing=()
[[ $EUID -eq 0 ]] || missing+=("root (debootstrap needs it)")
command -v debootstrap >/dev/null 2>&1 || missing+=("debootstrap (apt-get install debootstrap)")
if ((${#missing[@]})); then
    echo "[guest] cannot build $tag; missing:" >&2
    printf '[guest]   - %s\n' "${missing[@]}" >&2
    exit 2
fi

mkdir -p "$ERNIC_CACHE_DIR/guest"
# One build at a time (parallel test launchers may all call this script).
exec 9>"$ERNIC_CACHE_DIR/guest/build.lock"
if ! flock -n 9; then
    echo "[guest] another build is running; waiting for it"
    flock 9
fi
up_to_date && exit 0
echo "[guest] building $tag (input hash $hash) in 5 stages; about 3-5 min when nothing is cached"

# 1. debootstrap, cached by the hash of its own inputs.
base_hash=$(sha256sum <"$here/base/mkbase.sh" | cut -c1-12)
base_tar="$ERNIC_CACHE_DIR/guest/sid-base-$base_hash.tar"
base_image="$ERNIC_BASE_REPO:$base_hash"
if docker image inspect "$base_image" >/dev/null 2>&1; then
    step 1/5 "debootstrap sid: not needed, $base_image exists"
elif [[ -s $base_tar ]]; then
    step 1/5 "debootstrap sid: cached $base_tar"
else
    step 1/5 "debootstrap --variant=minbase sid -> $base_tar (about 1 min)"
    blog="$ERNIC_CACHE_DIR/guest/debootstrap.log"
    if ! "$here/base/mkbase.sh" "$ERNIC_CACHE_DIR/guest/rootfs-work" "$base_tar" >"$blog" 2>&1; then
        echo "[guest] debootstrap failed; last lines of $blog:" >&2
        tail -n 30 "$blog" >&2
        exit 1
    fi
    step 1/5 "debootstrap done ($(du -h "$base_tar" | cut -f1))"
fi

# 2. docker import.
if docker image inspect "$base_image" >/dev/null 2>&1; then
    step 2/5 "base image $base_image: present"
else
    step 2/5 "docker import $base_tar as $base_image"
    docker import -m "ernic sid minbase ($base_hash)" "$base_tar" "$base_image" >/dev/null
fi

# 3. docker build (packages, ionic_rdma.ko, initramfs, manifest).
step 3/5 "docker build $tag (packages, ionic_rdma.ko, initrd; about 5 min cold)"
log="$ERNIC_CACHE_DIR/guest/docker-build.log"
# docker.io 20.10 has no buildx here: use the classic builder.
build=(env DOCKER_BUILDKIT=0 docker build
    --build-arg "BASE_IMAGE=$base_image" --build-arg "INPUT_HASH=$hash"
    -t "$tag" "$here")
if [[ ${ERNIC_GUEST_VERBOSE:-0} == 1 ]]; then
    "${build[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
else
    # Show the Dockerfile steps and our own scripts' summary lines only, each with the time so far.
    set +e
    "${build[@]}" 2>&1 | tee "$log" | sed -u 's/\x1b\[[0-9;]*m//g' |
        grep --line-buffered -E '^Step [0-9]+/[0-9]+ : (RUN|COPY)|^(qemu|ionic_rdma|initrd|vmlinux): ' |
        while IFS= read -r line; do
            ((${#line} > 110)) && line="${line:0:107}..."
            printf '[guest] stage 3/5:   %s (elapsed %s)\n' "$line" "$(elapsed)"
        done
    rc=${PIPESTATUS[0]}
    set -e
fi
if ((rc != 0)); then
    echo "[guest] docker build failed (exit $rc); last lines of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
fi
step 3/5 "docker build done"

# 4. tags.
step 4/5 "tag $tag as $ERNIC_GUEST_REPO:latest"
docker tag "$tag" "$ERNIC_GUEST_REPO:latest"

# 5. manifest and size.
step 5/5 "manifest (/usr/share/ernic/manifest.txt)"
docker run --rm --entrypoint cat "$tag" /usr/share/ernic/manifest.txt
size=$(docker image inspect -f '{{.Size}}' "$tag")
echo "[guest] image $tag: $((size / 1024 / 1024)) MiB; built in $(elapsed)"
