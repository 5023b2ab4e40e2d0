#!/usr/bin/env bash
# start-footprint.sh: how fast `ernic serve` opens its socket and how much memory it holds while idle.
#   packaging/start-footprint.sh [--runs N] [--idle SECONDS] -- COMMAND...
# COMMAND is the server without --socket (for example: ./ernic serve, or /usr/bin/ernic serve --backend none);
# each run adds --socket in a fresh directory, starts it, polls for the socket every millisecond, waits
# --idle seconds (default 3) with no client, reads VmRSS and RssAnon from /proc/PID/status and stops it with
# SIGTERM. RssAnon is the part no other process can share: VmRSS less the mapped files (the runtime's libraries,
# its modules and the AOT cache), which every server of a host shares through the page cache.
# Prints one line per run and the median of each figure (docs/operations.md, "Start and footprint").
set -euo pipefail
runs=5 idle=3
while (($#)); do
    case "$1" in
        --runs) runs=${2:?--runs N}; shift 2 ;;
        --idle) idle=${2:?--idle SECONDS}; shift 2 ;;
        --) shift; break ;;
        *) echo "start-footprint.sh: unknown option '$1' (usage: [--runs N] [--idle S] -- COMMAND...)" >&2; exit 2 ;;
    esac
done
(($#)) || { echo "start-footprint.sh: no command (usage: [--runs N] [--idle S] -- COMMAND...)" >&2; exit 2; }

now_ms() { date +%s%3N; }
# The java process under COMMAND (the launcher execs it, so usually the same PID).
status_kib() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"; }
# CPU time (user + system, ms) the process has used: on a loaded machine a steadier figure than the wall clock.
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz)}' "/proc/$1/stat"; }

dir=$(mktemp -d /tmp/ernic-startup.XXXXXX)
trap 'rm -rf "$dir"' EXIT
opens=() cpus=() rsss=() anons=()
for ((i = 1; i <= runs; i++)); do
    sock="$dir/s$i.sock"
    t0=$(now_ms)
    "$@" --socket "$sock" >"$dir/log$i" 2>&1 &
    pid=$!
    while [[ ! -S $sock ]]; do
        if ! kill -0 "$pid" 2>/dev/null; then echo "start-footprint.sh: the server exited; its log:" >&2; cat "$dir/log$i" >&2; exit 1; fi
        sleep 0.001
    done
    open=$(($(now_ms) - t0))
    cpu=$(cpu_ms "$pid")
    sleep "$idle"
    rss=$(status_kib "$pid" VmRSS) anon=$(status_kib "$pid" RssAnon)
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
    printf 'run %d: socket open after %d ms (%d ms of CPU), idle RSS %d MiB (anonymous %d MiB)\n' "$i" "$open" "$cpu" \
        $((rss / 1024)) $((anon / 1024))
    opens+=("$open") cpus+=("$cpu") rsss+=("$((rss / 1024))") anons+=("$((anon / 1024))")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf 'median of %d: socket open %d ms (%d ms of CPU), idle RSS %d MiB (anonymous %d MiB) (load average %s)\n' \
    "$runs" "$(median "${opens[@]}")" "$(median "${cpus[@]}")" "$(median "${rsss[@]}")" "$(median "${anons[@]}")" \
    "$(cut -d' ' -f1 /proc/loadavg)"
