#!/bin/bash
# perftest on the emulated ionic NIC against Soft-RoCE (rdma_rxe): ib_write_bw, ib_read_bw, ib_send_bw,
# ib_write_lat and ib_send_lat at a few message sizes, then ibv_rc_pingpong (4 KiB) on each device,
# polling and with -e (-e sleeps on completion events: CQ arm -> EQE -> MSI-X -> the guest's interrupt ->
# the completion channel, as most applications do). Prints the raw output, then one JSON document between
# the lines BENCH-JSON-BEGIN and BENCH-JSON-END. Exits non-zero if a device did not come up or any run
# failed (the JSON still lists every run).
#
# One guest (default): server and client in this VM on the device's own address; rxe on a dummy netdev.
# Runs in a guest booted with an ionic device (ernic.it.bench.GuestBench perftest, or
# ./ernic guest run --no-network guest/bench/perftest-vs-rxe.sh).
# Two guests (PERF_TWO_GUESTS=1; ernic.it.bench.GuestBench two-guests, or ./ernic guest run --vms 2 ...):
# each with its own server, the servers in a mesh, the guests' TAPs on one bridge. Guest 0 runs the server
# ends, guest 1 the client ends and prints the JSON: ionic's bytes cross the mesh; rxe runs on the ionic
# netdev, so its RoCE frames cross the emulated Ethernet, the TAPs and the bridge.
# On the wire (two guests, no mesh, servers with --roce; GuestBench two-guests-wire*): PERF_DEVICES=ionic_0, and
# with PERF_SERVER_DEV=rxe0 guest 0's ends run on Soft-RoCE (its server without --roce): ionic_0 to rxe0.
# Environment: PERF_SIZES (default "64 4096 65536 1048576"), PERF_TESTS (empty: none), PINGPONG_MODES (default
# "poll event"; empty: none), PINGPONG_SIZE (4096), PINGPONG_ITERS (1000), PINGPONG_ROUNDS (3), PERF_TWO_GUESTS,
# PERF_DEVICES (the rows' devices, default "ionic_0 rxe0"), PERF_SERVER_DEV (guest 0's device for every row),
# PERF_IONIC_KIND (how the JSON describes ionic_0).
set -u

SIZES=${PERF_SIZES:-64 4096 65536 1048576}
DEVICES=${PERF_DEVICES:-ionic_0 rxe0}
TESTS=${PERF_TESTS-ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat}
if [[ ${PERF_TWO_GUESTS:-0} == 1 ]]; then
    ROLE=$([[ ${ERNIC_VM_INDEX:-0} == 0 ]] && echo server || echo client)
    IONIC_IP=${ERNIC_GUEST_IP:?two guests need the segment of ernic guest run --vms 2}
    RXE_IP=$IONIC_IP
    PEER_IP=192.168.77.1   # guest 0, where the server ends run
else
    ROLE=both
    IONIC_IP=10.9.0.1
    RXE_IP=10.10.0.1
fi
# Raw perftest output: in the job directory when there is one (kept on the host), else /tmp.
RAW=/job/perf
mkdir -p $RAW 2>/dev/null && touch $RAW/.w 2>/dev/null || { RAW=/tmp/perf; mkdir -p $RAW; }
rm -f $RAW/.w
# perftest converts TSC cycles to time with a frequency it measures at start against gettimeofday;
# under TCG that fit is sometimes too noisy (it prints "Correlation coefficient r^2: ... < 0.9"),
# the frequency is then 0 and the result line reads 0.00 MiB/s or inf usec. Such a run is repeated
# (up to 3 attempts; in one guest only, where both ends can start again); the JSON records the attempts.
ATTEMPTS=$([[ $ROLE == both ]] && echo 3 || echo 1)
t0=$(date +%s)

# The ionic device, as the guest tests bring it up.
nd=$(ernic-ionic-up $IONIC_IP)

modprobe rdma_rxe
if [[ $ROLE == both ]]; then
    # Soft-RoCE on a dummy netdev with an address of its own (same MTU as the ionic netdev).
    ip link add rxenet0 type dummy
    ip link set rxenet0 mtu "$(cat /sys/class/net/$nd/mtu)" up
    ip addr add $RXE_IP/24 dev rxenet0
    rdma link add rxe0 type rxe netdev rxenet0
else
    rdma link add rxe0 type rxe netdev "$nd"
fi
for i in $(seq 1 40); do grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break; sleep 0.5; done
# rxe logs "speed is unknown" for a dummy netdev on every query: keep the console readable.
dmesg -n 1

# The GID index of a device's IPv4 address (RoCEv2, IPv4-mapped).
gidx() {
    local g
    for g in /sys/class/infiniband/$1/ports/1/gids/*; do
        [[ $(cat $g 2>/dev/null) == 0000:0000:0000:0000:0000:ffff:* ]] && { basename $g; return; }
    done
    echo 1
}
up=1
for d in ionic_0 rxe0; do
    st=$(cat /sys/class/infiniband/$d/ports/1/state 2>/dev/null)
    echo "device $d state '$st' gid $(gidx $d) $(cat /sys/class/infiniband/$d/ports/1/gids/$(gidx $d) 2>/dev/null)"
    [[ $st == *ACTIVE* ]] || up=0
done
ibv_devinfo -d ionic_0 | grep -E 'active_mtu|hca_id'
ibv_devinfo -d rxe0 | grep -E 'active_mtu|hca_id'
if ((up == 0)); then echo "PERFTEST: a device is not ACTIVE"; exit 3; fi
if [[ $ROLE != both ]]; then
    # The other guest may boot minutes later under TCG (a stalled boot is retried).
    other=$([[ $ROLE == client ]] && echo $PEER_IP || echo 192.168.77.2)
    for i in $(seq 1 600); do ping -c 1 -W 1 $other > /dev/null && break; sleep 1; done
fi

# Iterations per run: enough for a steady number, few enough for TCG (whole run < ~10 min). Small
# bandwidth runs need many: ionic moves ~90,000 64 B WRITEs a second here, so 500 of them (the count
# before 2026-12-03) lasted a few milliseconds and measured perftest's start, not the device.
iters() { # test size
    case $1 in
        *_lat) case $2 in 64|4096) echo 200 ;; 65536) echo 100 ;; *) echo 20 ;; esac ;;
        *) case $2 in 64) echo 100000 ;; 4096) echo 20000 ;; 65536) echo 200 ;; *) echo 20 ;; esac ;;
    esac
}

# One run of a tool, on its own TCP port: both ends here, or (two guests) the server end in guest 0 and
# the client end in guest 1, which tries again while the server end is not listening yet (at most 5
# minutes). Sets c and sv (exit statuses; the other guest's end counts as 0) and ms.
port=18700
run_pair() { # base peer-address tool args...
    local base=$1 addr=$2 end
    shift 2
    port=$((port + 1))
    local start=$(date +%s%N)
    c=0; sv=0
    case $ROLE in
        both)
            timeout 120 stdbuf -oL "$@" -p $port >$base.server 2>&1 &
            local spid=$!
            sleep 1.5
            timeout 120 stdbuf -oL "$@" -p $port $addr >$base.client 2>&1; c=$?
            wait $spid; sv=$? ;;
        server)
            # A little longer than the client end's own limit: a pair that hangs ends on both sides.
            timeout 150 stdbuf -oL "$@" -p $port >$base.server 2>&1; sv=$?
            cp $base.server $base.client ;;  # so this guest's log shows the figures of its end too
        client)
            end=$(( $(date +%s) + 300 ))
            while :; do
                timeout 120 stdbuf -oL "$@" -p $port $addr >$base.client 2>&1; c=$?
                ((c != 0)) && grep -q "Couldn't connect" $base.client && [ "$(date +%s)" -lt $end ] || break
                sleep 1
            done ;;
    esac
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
}

# The device of this guest's end of row $1: the row's, or in guest 0 PERF_SERVER_DEV when set.
local_dev() {
    if [[ $ROLE == server && -n ${PERF_SERVER_DEV:-} ]]; then echo $PERF_SERVER_DEV; else echo $1; fi
}

# Where a device's client end connects: guest 0 (two guests), else this guest's address on that device.
server_addr() {
    if [[ $ROLE != both ]]; then echo $PEER_IP; elif [[ $1 == rxe0 ]]; then echo $RXE_IP; else echo $IONIC_IP; fi
}

runs=$RAW/runs.txt
: >$runs
for d in $DEVICES; do
    ipaddr=$(server_addr $d)
    ld=$(local_dev $d)
    for t in $TESTS; do
        for s in $SIZES; do
            n=$(iters $t $s)
            base="$RAW/$d-$t-$s"
            for a in $(seq 1 $ATTEMPTS); do
                run_pair $base $ipaddr $t -d $ld -x $(gidx $ld) -F -s $s -n $n
                echo "=== $d $t size=$s n=$n attempt=$a client=$c server=$sv wall_ms=$ms"
                grep -E '^ *[0-9]+ +[0-9]+ ' $base.client || tail -n 5 $base.client $base.server 2>/dev/null
                # Repeat only a run that worked but whose clock calibration failed.
                if ((c == 0 && sv == 0)) && grep -q 'Correlation coefficient' $base.client; then
                    grep -h 'Correlation coefficient' $base.client
                    cp $base.client $base.client.failed-calibration-$a
                    continue
                fi
                break
            done
            echo "$d $t $s $n $c $sv $ms $a $base.client" >>$runs
        done
    done
done

PP_SIZE=${PINGPONG_SIZE:-4096}
PP_ITERS=${PINGPONG_ITERS:-1000}
# Rounds alternate the devices (ionic, rxe, ionic, ...) so both see the same drift of the host's load;
# the ratio is of the medians.
for round in $(seq 1 ${PINGPONG_ROUNDS:-3}); do
  for mode in ${PINGPONG_MODES-poll event}; do
    flag=; [[ $mode == event ]] && flag=-e
    for d in $DEVICES; do
        ipaddr=$(server_addr $d)
        ld=$(local_dev $d)
        base="$RAW/$d-rc_pingpong_$mode-$PP_SIZE-$round"
        run_pair $base $ipaddr ibv_rc_pingpong -d $ld -g $(gidx $ld) -s $PP_SIZE -n $PP_ITERS $flag
        echo "=== $d ibv_rc_pingpong $flag size=$PP_SIZE n=$PP_ITERS round=$round client=$c server=$sv wall_ms=$ms"
        grep -E 'iters in' $base.client || tail -n 5 $base.client $base.server 2>/dev/null
        echo "$d rc_pingpong_$mode $PP_SIZE $PP_ITERS $c $sv $ms $round $base.client" >>$runs
    done
  done
done
echo "PERFTEST: runs took $(( $(date +%s) - t0 )) s"
if [[ $ROLE == server ]]; then
    exit 0   # guest 1 reports
fi

IONIC_IP_DOC=$IONIC_IP RXE_IP_DOC=$RXE_IP PERF_TWO_GUESTS=${PERF_TWO_GUESTS:-0} PERF_IONIC_KIND=${PERF_IONIC_KIND:-} \
    python3 - "$runs" <<'PY'
import json, math, re, sys, subprocess, os
runs = [l.split() for l in open(sys.argv[1]) if l.strip()]
doc = {"tool": "perftest", "units": {"bw": "MiB/s (perftest's own; MB/s = MiB/s * 1.048576)", "lat": "usec"},
       "perftest_version": subprocess.run(["dpkg-query", "-W", "-f=${Version}", "perftest"],
                                          capture_output=True, text=True).stdout,
       "kernel": os.uname().release, "devices": {}, "results": [], "ratios": []}
def mtu(dev):
    out = subprocess.run(["ibv_devinfo", "-d", dev], capture_output=True, text=True).stdout
    m = re.search(r"active_mtu:\s+(\d+)", out)
    return int(m.group(1)) if m else None
two = os.environ.get("PERF_TWO_GUESTS") == "1"
doc["guests"] = 2 if two else 1
doc["devices"]["ionic_0"] = {"kind": "emulated ionic (ernic)" + (os.environ.get("PERF_IONIC_KIND") or
                                                                  (", across the mesh of the two guests' servers" if two else "")),
                             "address": os.environ.get("IONIC_IP_DOC", ""), "active_mtu": mtu("ionic_0")}
doc["devices"]["rxe0"] = {"kind": "Soft-RoCE (rdma_rxe) " + ("on the ionic netdev, over the TAPs and their bridge" if two else "on a dummy netdev"),
                          "address": os.environ.get("RXE_IP_DOC", ""), "active_mtu": mtu("rxe0")}
ok = True
for dev, test, size, n, c, s, ms, attempts, path in runs:
    r = {"device": dev, "test": test, "size": int(size), "iterations": int(n),
         "client_exit": int(c), "server_exit": int(s), "wall_ms": int(ms), "attempts": int(attempts)}
    rows = []
    if test.startswith("rc_pingpong"):  # "1000 iters in 0.57 seconds = 573.26 usec/iter"
        r["round"] = r.pop("attempts")
        for line in open(path, errors="replace"):
            m = re.match(r"\s*(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter", line)
            if m:
                rows.append(m)
                r["t_avg_usec"] = float(m.group(3))
        r["ok"] = r["client_exit"] == 0 and r["server_exit"] == 0 and bool(rows) and r.get("t_avg_usec", 0) > 0
        ok &= r["ok"]
        doc["results"].append(r)
        continue
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) >= 5 and f[0].isdigit() and f[1].isdigit():
            try:
                rows.append([float(x) for x in f])
            except ValueError:
                pass
    if rows:
        f = rows[-1]
        # A main figure perftest could not measure (inf, nan, zero: its clock calibration failed)
        # fails the run; any non-finite value is kept as null (stdev is nan with few samples).
        main = [f[3]] if test.endswith("_bw") else [f[4], f[5]]
        if any(not math.isfinite(x) or x <= 0 for x in main):
            r["anomaly"] = "perftest printed: " + " ".join(str(x) for x in f)
        f = [x if math.isfinite(x) else None for x in f]
        if test.endswith("_bw"):   # #bytes #iterations BW peak BW average MsgRate[Mpps]
            r.update(bw_peak_MiB_s=f[2], bw_avg_MiB_s=f[3], bw_avg_MB_s=None if f[3] is None else round(f[3] * 1.048576, 2), msg_rate_Mpps=f[4])
        else:                      # #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
            r.update(t_min_usec=f[2], t_max_usec=f[3], t_typical_usec=f[4], t_avg_usec=f[5],
                     t_stdev_usec=f[6], t_p99_usec=f[7], t_p999_usec=f[8])
    r["ok"] = r["client_exit"] == 0 and r["server_exit"] == 0 and bool(rows) and "anomaly" not in r
    ok &= r["ok"]
    doc["results"].append(r)
pp = {}
for r in doc["results"]:
    if r["test"].startswith("rc_pingpong") and r["ok"]:
        pp.setdefault((r["device"], r["test"], r["size"]), []).append(r["t_avg_usec"])
for (dev, test, size), ts in sorted(pp.items()):
    x = pp.get(("rxe0", test, size))
    if dev == "ionic_0" and x:
        med = lambda v: sorted(v)[len(v) // 2]
        doc["ratios"].append({"test": test, "size": size, "rounds": len(ts),
                              "t_avg_ionic_over_rxe": round(med(ts) / med(x), 3),
                              "ionic_usec_per_iter": sorted(ts), "rxe_usec_per_iter": sorted(x)})
by = {(r["device"], r["test"], r["size"]): r for r in doc["results"] if not r["test"].startswith("rc_pingpong")}
for (dev, test, size), r in by.items():
    x = by.get(("rxe0", test, size))
    if dev != "ionic_0" or not x or not r["ok"] or not x["ok"]:
        continue
    if test.endswith("_bw"):
        doc["ratios"].append({"test": test, "size": size, "bw_avg_ionic_over_rxe": round(r["bw_avg_MiB_s"] / x["bw_avg_MiB_s"], 3)})
    else:
        doc["ratios"].append({"test": test, "size": size,
                              "t_typical_ionic_over_rxe": round(r["t_typical_usec"] / x["t_typical_usec"], 3),
                              "t_avg_ionic_over_rxe": round(r["t_avg_usec"] / x["t_avg_usec"], 3)})
doc["all_ok"] = ok
print("BENCH-JSON-BEGIN")
print(json.dumps(doc, indent=1, allow_nan=False))
print("BENCH-JSON-END")
sys.exit(0 if ok else 4)
PY
