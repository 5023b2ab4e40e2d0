# shellcheck shell=bash
# Shared helpers for the real-guest image: sourced by guest/build.sh and by the
# test launcher. Functions return (never exit) so a caller can decide what to do.
#
#   ensure_docker          make sure a docker daemon answers (starts one if we can)
#   guest_input_hash       sha256 over the build inputs under guest/ (64 hex chars)
#   guest_image_tag        ernic-guest:<first 12 hex of the input hash>
#   guest_run JOB [opts]   boot a guest for host dir JOB (docker run ... ernic-vm)

ERNIC_GUEST_DIR="${ERNIC_GUEST_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
ERNIC_GUEST_REPO="${ERNIC_GUEST_REPO:-ernic-guest}"
ERNIC_BASE_REPO="${ERNIC_BASE_REPO:-ernic-sid-base}"
ERNIC_CACHE_DIR="${ERNIC_CACHE_DIR:-/var/cache/ernic}"

# Seconds to wait for a dockerd we started ourselves.
ERNIC_DOCKERD_WAIT="${ERNIC_DOCKERD_WAIT:-30}"

ernic_log() { printf '[guest] %s\n' "$*" >&2; }

# ensure_docker: return 0 when `docker info` works. Otherwise, when we are root
# and dockerd is installed, start dockerd in the background (there is no systemd
# on these machines) and wait up to $ERNIC_DOCKERD_WAIT seconds for it. If that is
# not possible, print exactly what is missing and return 2.
ensure_docker() {
    if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
        return 0
    fi
    local missing=()
    if command -v docker >/dev/null 2>&1 && ! command -v dockerd >/dev/null 2>&1; then
        # Another engine's docker command (podman-docker, a client for a remote engine): not ours to start.
        missing+=("an engine that answers 'docker info' ($(command -v docker) is there but no dockerd to start;
    start your engine, for podman 'podman system service --time=0 &', or set DOCKER_HOST)")
    elif ! command -v docker >/dev/null 2>&1 || ! command -v dockerd >/dev/null 2>&1; then
        missing+=("docker.io (the docker and dockerd commands; apt-get install docker.io)")
    fi
    if [[ ${EUID:-$(id -u)} -ne 0 ]]; then
        missing+=("root (needed to start dockerd; run as root or start dockerd yourself)")
    fi
    if ((${#missing[@]})); then
        ernic_log "docker is not reachable and cannot be started here; missing:"
        local m
        for m in "${missing[@]}"; do ernic_log "  - $m"; done
        return 2
    fi
    local logf=/var/log/ernic-dockerd.log
    ernic_log "docker is not reachable: starting dockerd in the background (log: $logf)"
    # setsid + nohup: the daemon must outlive this script and its process group.
    setsid nohup dockerd >"$logf" 2>&1 </dev/null &
    local i
    for ((i = 0; i < ERNIC_DOCKERD_WAIT * 2; i++)); do
        if docker info >/dev/null 2>&1; then
            ernic_log "dockerd is up after $((i / 2)) s"
            return 0
        fi
        sleep 0.5
    done
    ernic_log "dockerd did not answer within ${ERNIC_DOCKERD_WAIT} s; last lines of $logf:"
    tail -n 20 "$logf" >&2 || true
    return 2
}

# The files that are build inputs: everything under guest/ except documentation
# and bench/ (scripts run in a booted guest, never copied into the image).
# Paths are relative to guest/, sorted bytewise so the hash is stable.
guest_input_files() {
    (cd "$ERNIC_GUEST_DIR" && find . -path ./bench -prune -o -type f ! -name '*.md' ! -name '*~' ! -name '.*.swp' -printf '%P\n' | LC_ALL=C sort)
}

# sha256 over (path, executable bit, content) of every input file. The mode is
# included because COPY preserves it and it decides whether a script runs.
guest_input_hash() {
    local f
    guest_input_files | while IFS= read -r f; do
        printf '%s %s %s\n' "$(sha256sum <"$ERNIC_GUEST_DIR/$f" | cut -d' ' -f1)" \
            "$([[ -x $ERNIC_GUEST_DIR/$f ]] && echo x || echo -)" "$f"
    done | sha256sum | cut -d' ' -f1
}

guest_image_tag() {
    printf '%s:%s\n' "$ERNIC_GUEST_REPO" "$(guest_input_hash | cut -c1-12)"
}

# guest_run JOBDIR [ernic-vm options...]: boot one guest in a fresh container
# with the job directory JOBDIR (holds script.sh). Each --socket PATH is made
# absolute and its directory is mounted at the same path in the container.
# Returns ernic-vm's exit status (the script's). Image: $ERNIC_GUEST_IMAGE or
# ernic-guest:latest. No privileges are needed: QEMU uses TCG, the memfd guest
# RAM works under docker's default seccomp profile.
guest_run() {
    local job=${1:?usage: guest_run JOBDIR [ernic-vm options]}
    shift
    job=$(realpath "$job")
    local run=(docker run --rm -v "$job:/job")
    local vm=(ernic-vm --job /job) sock
    while (($#)); do
        if [[ $1 == --socket && $# -ge 2 ]]; then
            sock=$(realpath -m "$2")
            run+=(-v "$(dirname "$sock"):$(dirname "$sock")")
            vm+=(--socket "$sock")
            shift 2
        else
            vm+=("$1")
            shift
        fi
    done
    # Not used by TCG; passed so that --extra-qemu-args "-accel kvm" can be tried.
    [[ -c /dev/kvm ]] && run+=(--device /dev/kvm)
    "${run[@]}" "${ERNIC_GUEST_IMAGE:-$ERNIC_GUEST_REPO:latest}" "${vm[@]}"
}
