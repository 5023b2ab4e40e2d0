#!/bin/bash
# fio on the in-process NVMe-oF target (the server runs --backend nvmeof, reached over the emulated
# ionic NIC) against the guest kernel's own nvmet-rdma target over Soft-RoCE (rdma_rxe on a dummy
# netdev, a RAM disk namespace), both in this one guest and with the same fio jobs; and ib_send_lat -e
# at 4 KiB on ionic_0, the floor under a QD1 read (command SEND, data WRITE, response SEND). Prints the
# raw output, then one JSON document between the lines BENCH-JSON-BEGIN and BENCH-JSON-END. Exits
# non-zero if a target did not connect or a job failed (the JSON still lists every job).
#
# Runs in a guest booted against a server with --backend nvmeof:size=256M (ernic.it.bench.GuestBench,
# section 6 of ./ernic bench). Environment: NVME_BENCH_RUNTIME (seconds per fio job, default 8).
set -u

GUEST_IP=192.168.200.2
TARGET_IP=192.168.200.1 TARGET_NQN=nvmet-test
RXE_IP=10.10.0.1 KERNEL_NQN=kernel-nvmet KERNEL_PORT=4421
RUNTIME=${NVME_BENCH_RUNTIME:-8}
SPAN=128M
RAW=/job/nvme
mkdir -p $RAW 2>/dev/null && touch $RAW/.w 2>/dev/null || { RAW=/tmp/nvme; mkdir -p $RAW; }
rm -f $RAW/.w
t0=$(date +%s)

# The ionic device, as the guest tests bring it up; the target's address answers ARP.
nd=$(ernic-ionic-up $GUEST_IP)

# Soft-RoCE on a dummy netdev with an address of its own (same MTU as the ionic netdev).
ip link add rxenet0 type dummy
ip link set rxenet0 mtu "$(cat /sys/class/net/$nd/mtu)" up
ip addr add $RXE_IP/24 dev rxenet0
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev rxenet0
for i in $(seq 1 40); do grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break; sleep 0.5; done
dmesg -n 1   # rxe logs "speed is unknown" for a dummy netdev on every query

# The kernel's target: nvmet-rdma on the rxe address, a 256 MiB RAM disk (brd) as its namespace.
modprobe brd rd_nr=1 rd_size=$((256 * 1024))
modprobe nvmet
modprobe nvmet-rdma
cfs=/sys/kernel/config/nvmet
mkdir $cfs/subsystems/$KERNEL_NQN
echo 1 >$cfs/subsystems/$KERNEL_NQN/attr_allow_any_host
mkdir $cfs/subsystems/$KERNEL_NQN/namespaces/1
echo -n /dev/ram0 >$cfs/subsystems/$KERNEL_NQN/namespaces/1/device_path
echo 1 >$cfs/subsystems/$KERNEL_NQN/namespaces/1/enable
mkdir $cfs/ports/1
echo rdma >$cfs/ports/1/addr_trtype
echo ipv4 >$cfs/ports/1/addr_adrfam
echo $RXE_IP >$cfs/ports/1/addr_traddr
echo $KERNEL_PORT >$cfs/ports/1/addr_trsvcid
ln -s $cfs/subsystems/$KERNEL_NQN $cfs/ports/1/subsystems/$KERNEL_NQN

modprobe nvme-rdma
mkdir -p /etc/nvme
[ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn >/etc/nvme/hostnqn
namespaces() { ls /sys/block | grep -E '^nvme[0-9]+n[0-9]+$' | sort; }
connect() { # connect ADDR PORT NQN: prints the namespace's block device
    local before n
    before=$(namespaces)
    nvme connect -t rdma -a "$1" -s "$2" -n "$3" >&2 || return 1
    for i in $(seq 1 40); do
        for n in $(namespaces); do   # (no /dev/fd in this guest, so no process substitution)
            echo "$before" | grep -qxF "$n" || { echo "/dev/$n"; return 0; }
        done
        sleep 0.5
    done
    return 1
}
ours=$(connect $TARGET_IP 4420 $TARGET_NQN) || { echo "NVME-BENCH: cannot connect to the in-process target"; exit 3; }
kernel=$(connect $RXE_IP $KERNEL_PORT $KERNEL_NQN) || { echo "NVME-BENCH: cannot connect to nvmet-rdma over rxe0"; exit 3; }
echo "targets: ours $ours ($(cat /sys/block/${ours#/dev/}/queue/logical_block_size) B), kernel $kernel ($(cat /sys/block/${kernel#/dev/}/queue/logical_block_size) B)"
nvme list

# Both namespaces written once over the span the jobs use, so no read finds a hole.
for d in $ours $kernel; do dd if=/dev/zero of=$d bs=1M count=128 oflag=direct status=none; done

# name rw bs iodepth numjobs
JOBS="lat-randread-4k randread 4k 1 1
randread-4k-qd32x2 randread 4k 32 2
randwrite-4k-qd32x2 randwrite 4k 32 2
read-1m-qd4 read 1M 4 1
write-1m-qd4 write 1M 4 1"
runs=$RAW/runs.txt
: >$runs
while read -r name rw bs qd nj; do
    for which in ours kernel; do
        d=$ours; [ $which = kernel ] && d=$kernel
        f=$RAW/$which-$name.json
        timeout $((RUNTIME + 120)) fio --name=$name --filename=$d --rw=$rw --bs=$bs --iodepth=$qd --numjobs=$nj \
            --ioengine=libaio --direct=1 --size=$SPAN --time_based --runtime=$RUNTIME --ramp_time=1 \
            --group_reporting --output-format=json --output=$f
        rc=$?
        echo "=== $which $name exit=$rc"
        echo "$which $name $rc $f" >>$runs
    done
done <<<"$JOBS"

# The verbs floor: ib_send_lat in event mode (as the block layer waits) at 4 KiB on ionic_0.
lat=$RAW/ib_send_lat
for a in 1 2 3; do
    timeout 120 ib_send_lat -d ionic_0 -x 1 -F -e -s 4096 -n 500 >$lat.server 2>&1 &
    spid=$!
    sleep 1.5
    timeout 120 ib_send_lat -d ionic_0 -x 1 -F -e -s 4096 -n 500 $GUEST_IP >$lat.client 2>&1; c=$?
    wait $spid; s=$?
    grep -E '^ *4096 ' $lat.client
    # perftest's clock calibration under TCG is sometimes too noisy to give a figure: run it again.
    grep -q 'Correlation coefficient' $lat.client || break
done
echo "ib_send_lat $c $s $lat.client" >>$runs
nvme disconnect -n $TARGET_NQN
nvme disconnect -n $KERNEL_NQN
echo "NVME-BENCH: took $(( $(date +%s) - t0 )) s"

python3 - "$runs" "$RUNTIME" <<'PY'
import json, math, os, subprocess, sys
lines = [l.split() for l in open(sys.argv[1]) if l.strip()]
doc = {"tool": "fio", "runtime_s": int(sys.argv[2]), "kernel": os.uname().release,
       "fio_version": subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip(),
       "targets": {"ours": "in-process NVMe-oF target (--backend nvmeof, RAM) over the emulated ionic NIC",
                   "kernel": "nvmet-rdma over Soft-RoCE (rdma_rxe on a dummy netdev), brd RAM disk"},
       "units": {"iops": "I/O per second", "bw": "MB/s (10^6 bytes)", "lat": "usec, mean completion latency"},
       "results": [], "ratios": []}
ok = True
res = {}
send_lat = None
for f in lines:
    if f[0] == "ib_send_lat":
        c, s, path = int(f[1]), int(f[2]), f[3]
        for line in open(path, errors="replace"):
            x = line.split()
            if len(x) >= 6 and x[0] == "4096":
                try:
                    v = float(x[5])          # t_avg[usec]
                    send_lat = v if math.isfinite(v) and v > 0 else None
                except ValueError:
                    pass
        doc["ib_send_lat_e_4k_t_avg_usec"] = send_lat
        ok &= c == 0 and s == 0 and send_lat is not None
        continue
    which, name, rc, path = f[0], f[1], int(f[2]), f[3]
    r = {"target": which, "job": name, "exit": rc}
    try:
        j = json.load(open(path))["jobs"][0]
        rd, wr = j["read"], j["write"]
        r["iops"] = round(rd["iops"] + wr["iops"], 1)
        r["bw_MB_s"] = round((rd["bw_bytes"] + wr["bw_bytes"]) / 1e6, 2)
        side = rd if rd["io_bytes"] >= wr["io_bytes"] else wr
        r["lat_mean_usec"] = round(side["lat_ns"]["mean"] / 1000, 1)
        r["lat_p99_usec"] = round(side["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1000, 1)
        r["errors"] = j.get("error", 0)
    except (OSError, ValueError, KeyError, IndexError) as e:
        r["anomaly"] = "no fio result: %s" % e
    r["ok"] = rc == 0 and "anomaly" not in r and r.get("errors", 1) == 0 and r.get("iops", 0) > 0
    ok &= r["ok"]
    doc["results"].append(r)
    res[(which, name)] = r
def ratio(name, key, what, aim):
    a, b = res.get(("ours", name)), res.get(("kernel", name))
    if a and b and a["ok"] and b["ok"] and b[key] > 0:
        doc["ratios"].append({"job": name, "metric": what, "ours": a[key], "kernel": b[key],
                              "ours_over_kernel": round(a[key] / b[key], 3), "aim": aim})
ratio("lat-randread-4k", "lat_mean_usec", "QD1 4 KiB random read latency (usec)", "<= 0.5")
ratio("randread-4k-qd32x2", "iops", "4 KiB random read IOPS, QD32 x 2 jobs", ">= 5")
ratio("randwrite-4k-qd32x2", "iops", "4 KiB random write IOPS, QD32 x 2 jobs", ">= 5")
ratio("read-1m-qd4", "bw_MB_s", "1 MiB sequential read MB/s, QD4", ">= 5")
ratio("write-1m-qd4", "bw_MB_s", "1 MiB sequential write MB/s, QD4", ">= 5")
q = res.get(("ours", "lat-randread-4k"))
if q and q["ok"] and send_lat:
    doc["ratios"].append({"job": "lat-randread-4k", "metric": "QD1 4 KiB read latency over ib_send_lat -e 4 KiB t_avg",
                          "ours": q["lat_mean_usec"], "ib_send_lat": send_lat,
                          "ours_over_send_lat": round(q["lat_mean_usec"] / send_lat, 3), "aim": "<= 3"})
doc["all_ok"] = ok
print("BENCH-JSON-BEGIN")
print(json.dumps(doc, indent=1, allow_nan=False))
print("BENCH-JSON-END")
sys.exit(0 if ok else 4)
PY
