#!/bin/bash
# The in-process S3 store (the server runs --backend s3, on the emulated Ethernet) measured from the guest:
# HTTP-body PUT and GET with curl against an iperf3 stream between the same guest and the host over the
# server's TAP (guest to host for PUT, host to guest for GET); and the token path (x-amz-rdma-token: the
# store moves the object by rkey out of or into a buffer the client registered once) against the
# HTTP-body path, for 1 MiB and 64 MiB objects. Prints the raw figures, then one JSON document between
# the lines BENCH-JSON-BEGIN and BENCH-JSON-END. Exits non-zero if a transfer failed.
#
# Runs in a guest booted against a server with --backend s3 and a TAP whose host end is 192.168.200.3
# with an iperf3 server (ernic.it.bench.GuestBench s3, section 7 of ./ernic bench).
# Environment: S3_BENCH_REPS_1M (default 20), S3_BENCH_REPS_64M (default 3).
set -u

GUEST_IP=192.168.200.2 STORE_IP=192.168.200.1 HOST_IP=192.168.200.3
EP=http://$STORE_IP:9000/ernic
REPS_1M=${S3_BENCH_REPS_1M:-20}
REPS_64M=${S3_BENCH_REPS_64M:-3}
RAW=/job/s3
mkdir -p $RAW 2>/dev/null && touch $RAW/.w 2>/dev/null || { RAW=/tmp/s3; mkdir -p $RAW; }
rm -f $RAW/.w
t0=$(date +%s)

modprobe ionic
modprobe ionic_rdma
dev=$(lspci -D -n -d 1dd8:1002 | awk '{print $1}')
nd=$(ls /sys/bus/pci/devices/$dev/net/)
ip link set "$nd" up
ip addr add $GUEST_IP/24 dev "$nd"
for i in $(seq 1 40); do [ -e /sys/class/infiniband/ionic_0 ] && break; sleep 0.5; done
for i in $(seq 1 40); do grep -q ACTIVE /sys/class/infiniband/ionic_0/ports/1/state 2>/dev/null && break; sleep 0.5; done
ping -c 1 -W 5 $STORE_IP >/dev/null || { echo "S3-BENCH: the store does not answer ping"; exit 3; }
ping -c 1 -W 5 $HOST_IP >/dev/null || { echo "S3-BENCH: the TAP's host end does not answer ping"; exit 3; }

# The reference: TCP between this guest and the host over the TAP, 256 MiB each way.
for a in 1 2 3; do iperf3 -c $HOST_IP -n 256M -J >$RAW/iperf-up.json 2>&1 && break; sleep 1; done
for a in 1 2 3; do iperf3 -c $HOST_IP -n 256M -R -J >$RAW/iperf-down.json 2>&1 && break; sleep 1; done

# The HTTP-body path: curl's own transfer time (not its process start), one connection per request.
dd if=/dev/urandom of=/tmp/obj-1m bs=1M count=1 status=none
dd if=/dev/urandom of=/tmp/obj-64m bs=1M count=64 status=none
: >$RAW/curl.txt
# One request of each kind first, not counted: the server's code for it is compiled by then (the JIT), as
# it is in a server that has been up for a while.
curl -sS -f -o /dev/null -T /tmp/obj-1m -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' $EP/warm-up
curl -sS -f -o /dev/null $EP/warm-up
for size in 1m 64m; do
    reps=$REPS_1M; [ $size = 64m ] && reps=$REPS_64M
    for i in $(seq 1 $reps); do
        curl -sS -f -o /dev/null -w "put $size %{http_code} %{size_upload} %{time_total}\n" -T /tmp/obj-$size \
            -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' $EP/bench-$size >>$RAW/curl.txt
    done
    for i in $(seq 1 $reps); do
        curl -sS -f -o /tmp/back-$size -w "get $size %{http_code} %{size_download} %{time_total}\n" \
            $EP/bench-$size >>$RAW/curl.txt
    done
    cmp -s /tmp/obj-$size /tmp/back-$size && echo "http-exact $size" >>$RAW/curl.txt
done
cat $RAW/curl.txt | sort | uniq -c | sort -rn | head -4

# The same 1 MiB requests on one connection (curl reuses it across the URLs of one command), as the SDKs
# and the aws cli do with their connection pools: no handshake and no fresh slow start per request.
args=()
for i in $(seq 1 $REPS_1M); do args+=(-o /dev/null -T /tmp/obj-1m $EP/bench-ka-1m); done
curl -sS -f -w "put 1m %{http_code} %{size_upload} %{time_total}\n" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "${args[@]}" >$RAW/curl-keepalive.txt
args=()
for i in $(seq 1 $REPS_1M); do args+=(-o /tmp/back-ka-1m $EP/bench-ka-1m); done
curl -sS -f -w "get 1m %{http_code} %{size_download} %{time_total}\n" "${args[@]}" >>$RAW/curl-keepalive.txt
cmp -s /tmp/obj-1m /tmp/back-ka-1m && echo "http-exact 1m" >>$RAW/curl-keepalive.txt

# The token path: one registered 64 MiB buffer, one HTTP connection; each request moves its object by rkey.
# Not token.py: that name would shadow Python's own token module, which pyverbs' imports load.
cat >/tmp/s3token.py <<'PY'
import http.client, os, struct, sys, time
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.mr import MR
import pyverbs.libibverbs_enums as e

store, reps = sys.argv[1], {1 << 20: int(sys.argv[2]), 64 << 20: int(sys.argv[3])}
A = e.ibv_access_flags
N = 64 << 20
ctx = Context(name='ionic_0')
pd = PD(ctx)
mr = MR(pd, N, A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_WRITE | A.IBV_ACCESS_REMOTE_READ)
gid = bytes.fromhex(str(ctx.query_gid(1, 1)).replace(':', ''))
data = os.urandom(N)
mr.write(data, N)
conn = http.client.HTTPConnection(store, 9000, timeout=300)

def token(length):
    # transport RC, QPN, GID, rkey, address, length, port, LID: 44 bytes little-endian, 88 hex (docs/s3.md)
    return struct.pack('<BI16sIQQBH', 1, 0, gid, mr.rkey, mr.buf, length, 1, 0).hex()

def req(method, key, length):
    h = {'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-rdma-token': token(length)}
    t = time.perf_counter()
    conn.request(method, '/ernic/' + key, body=b'' if method == 'PUT' else None, headers=h)
    r = conn.getresponse()
    r.read()
    dt = time.perf_counter() - t
    moved = int(r.getheader('x-amz-rdma-bytes-transferred') or 0)
    return r.status, moved, dt

# One PUT and one GET first, not counted (the JIT, as for curl above).
req('PUT', 'tok-warm-up', 1 << 20)
req('GET', 'tok-warm-up', 1 << 20)
for size, n in reps.items():
    name = '1m' if size == 1 << 20 else '64m'
    for method in ('PUT', 'GET'):
        if method == 'GET':
            mr.write(bytes(size), size)
        for i in range(n):
            s, moved, dt = req(method, 'tok-' + name, size)
            print('token %s %s %d %d %.6f' % (method.lower(), name, s, moved, dt), flush=True)
        if method == 'GET':
            print('token-exact %s %s' % (name, mr.read(size, 0) == data[:size]), flush=True)
PY
python3 /tmp/s3token.py $STORE_IP $REPS_1M $REPS_64M >$RAW/token.txt 2>&1
tail -n 3 $RAW/token.txt
echo "S3-BENCH: took $(( $(date +%s) - t0 )) s"

python3 - "$RAW" <<'PY'
import json, os, sys
raw = sys.argv[1]
doc = {"tool": "curl, iperf3, pyverbs", "units": {"throughput": "MB/s (10^6 bytes)"},
       "store": "in-process S3 store (--backend s3) on the emulated ionic Ethernet",
       "reference": "iperf3 between the guest and the host over the server's TAP",
       "results": [], "ratios": []}
ok = True
def iperf(name):
    try:
        j = json.load(open(os.path.join(raw, name)))
        return j["end"]["sum_received"]["bits_per_second"] / 8 / 1e6
    except (OSError, ValueError, KeyError):
        return None
up, down = iperf("iperf-up.json"), iperf("iperf-down.json")
doc["iperf_guest_to_host_MB_s"] = up and round(up, 2)
doc["iperf_host_to_guest_MB_s"] = down and round(down, 2)
ok &= up is not None and down is not None
agg = {}
exact = set()
for path, kind in (("curl.txt", "http"), ("curl-keepalive.txt", "http-keepalive"), ("token.txt", "token")):
    for line in open(os.path.join(raw, path), errors="replace"):
        f = line.split()
        if len(f) == 2 and f[0] == "http-exact":
            exact.add((kind, f[1]))
        elif len(f) == 3 and f[0] == "token-exact":
            if f[2] == "True":
                exact.add(("token", f[1]))
        elif len(f) == 5 and f[0] in ("put", "get") and kind != "token":
            a = agg.setdefault((kind, f[0], f[1]), [0, 0.0, 0, 0])
            a[0] += int(float(f[3])); a[1] += float(f[4]); a[2] += 1; a[3] += f[2] != "200"
        elif len(f) == 6 and f[0] == "token":
            a = agg.setdefault((kind, f[1], f[2]), [0, 0.0, 0, 0])
            a[0] += int(f[4]); a[1] += float(f[5]); a[2] += 1; a[3] += f[3] != "200"
for (kind, op, size), (b, t, n, bad) in sorted(agg.items()):
    r = {"path": kind, "op": op, "size": size, "requests": n, "bytes": b, "seconds": round(t, 4),
         "MB_s": round(b / t / 1e6, 2) if t > 0 else None, "failed_requests": bad,
         "exact": (kind, size) in exact}
    r["ok"] = bad == 0 and b > 0 and r["exact"]
    ok &= r["ok"]
    doc["results"].append(r)
by = {(r["path"], r["op"], r["size"]): r for r in doc["results"]}
for size in ("1m", "64m"):
    for op, ref, aim_ref in (("put", up, "guest to host"), ("get", down, "host to guest")):
        h, t = by.get(("http", op, size)), by.get(("token", op, size))
        if h and h["ok"] and ref:
            doc["ratios"].append({"size": size, "op": op, "metric": "HTTP body over iperf3 " + aim_ref,
                                  "value": round(h["MB_s"] / ref, 3), "aim": ">= 0.8"})
        if h and t and h["ok"] and t["ok"]:
            doc["ratios"].append({"size": size, "op": op, "metric": "token path over HTTP body",
                                  "value": round(t["MB_s"] / h["MB_s"], 3), "aim": ">= 5"})
        k = by.get(("http-keepalive", op, size))
        if k and k["ok"] and ref:
            doc["ratios"].append({"size": size, "op": op, "metric": "HTTP body, one connection, over iperf3 " + aim_ref,
                                  "value": round(k["MB_s"] / ref, 3), "aim": ">= 0.8"})
        if k and t and k["ok"] and t["ok"]:
            doc["ratios"].append({"size": size, "op": op, "metric": "token path over HTTP body, both on one connection",
                                  "value": round(t["MB_s"] / k["MB_s"], 3), "aim": ">= 5"})
doc["all_ok"] = bool(ok)
print("BENCH-JSON-BEGIN")
print(json.dumps(doc, indent=1, allow_nan=False))
print("BENCH-JSON-END")
sys.exit(0 if ok else 4)
PY
