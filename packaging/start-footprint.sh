#!/usr/bin/env bash
# start-footprint.sh: how fast `ernic serve` opens its socket and how much memory it holds while idle.
#   packaging/start-footprint.sh [--runs N] [--idle SECONDS] [--client 'CLIENT...'] -- COMMAND...
# COMMAND is the server without --socket (for example: ./ernic serve, or /usr/bin/ernic serve --backend none);
# each run adds --socket in a fresh directory, starts it, polls for the socket every millisecond, waits
# --idle seconds (default 3) with no client, reads VmRSS and RssAnon from /proc/PID/status and stops it with
# SIGTERM. RssAnon is the part no other process can share: VmRSS less the mapped files (the runtime's libraries,
# its modules and the AOT cache), which every server of a host shares through the page cache.
# --client: then CLIENT SOCKET is started, which brings the device up and prints "up" (from the package:
# --client '/usr/lib/ernic/runtime/bin/java -cp /usr/lib/ernic/app/* ernic.it.bench.IdleClient'), and the size
# is read again --idle seconds after that, with RssFile and RssShmem (the client's memory the server touched).
# Prints one line per run and the median of each figure (docs/operations.md, "Start and footprint").
set -euo pipefail
runs=5 idle=3 client=""
while (($#)); do
    case "$1" in
        --runs) runs=${2:?--runs N}; shift 2 ;;
        --idle) idle=${2:?--idle SECONDS}; shift 2 ;;
        --client) client=${2:?--client CLIENT}; shift 2 ;;
        --) shift; break ;;
        *) echo "start-footprint.sh: unknown option '$1' (usage: [--runs N] [--idle S] [--client C] -- COMMAND...)" >&2
           exit 2 ;;
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
opens=() cpus=() rsss=() anons=() ups=() upanons=() upfiles=() upshms=()
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
    up=""
    if [[ -n $client ]]; then
        # the client stays connected while its standard input (fd 7 here) is open
        mkfifo "$dir/in$i"
        # CLIENT is a command line: split into words, its * left to java's class path (no globbing)
        set -f
        # shellcheck disable=SC2086
        $client "$sock" <"$dir/in$i" >"$dir/client$i" 2>&1 &
        cpid=$!
        set +f
        exec 7>"$dir/in$i"
        until grep -qx up "$dir/client$i"; do
            if ! kill -0 "$cpid" 2>/dev/null; then echo "start-footprint.sh: the client exited:" >&2; cat "$dir/client$i" >&2; exit 1; fi
            sleep 0.01
        done
        sleep "$idle"
        u=$(status_kib "$pid" VmRSS) ua=$(status_kib "$pid" RssAnon) uf=$(status_kib "$pid" RssFile) us=$(status_kib "$pid" RssShmem)
        exec 7>&-; wait "$cpid" || true
        up=$(printf '; with the client up: VmRSS %d MiB (anonymous %d, file %d, shared %d)' $((u / 1024)) $((ua / 1024)) \
            $((uf / 1024)) $((us / 1024)))
        ups+=("$((u / 1024))") upanons+=("$((ua / 1024))") upfiles+=("$((uf / 1024))") upshms+=("$((us / 1024))")
    fi
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
    printf 'run %d: socket open after %d ms (%d ms of CPU), idle RSS %d MiB (anonymous %d MiB)%s\n' "$i" "$open" "$cpu" \
        $((rss / 1024)) $((anon / 1024)) "$up"
    opens+=("$open") cpus+=("$cpu") rsss+=("$((rss / 1024))") anons+=("$((anon / 1024))")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
up=""
if [[ -n $client ]]; then
    up=$(printf '; with the client up: VmRSS %d MiB (anonymous %d, file %d, shared %d)' "$(median "${ups[@]}")" \
        "$(median "${upanons[@]}")" "$(median "${upfiles[@]}")" "$(median "${upshms[@]}")")
fi
printf 'median of %d: socket open %d ms (%d ms of CPU), idle RSS %d MiB (anonymous %d MiB)%s (load average %s)\n' \
    "$runs" "$(median "${opens[@]}")" "$(median "${cpus[@]}")" "$(median "${rsss[@]}")" "$(median "${anons[@]}")" \
    "$up" "$(cut -d' ' -f1 /proc/loadavg)"
