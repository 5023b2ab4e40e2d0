#!/bin/bash
# The in-process S3 store (the server runs --backend s3, on the emulated Ethernet) measured from the guest:
# HTTP-body PUT and GET with curl against an iperf3 stream between the same guest and the host over the
# server's TAP (guest to host for PUT, host to guest for GET); and the token path (x-amz-rdma-token: the
# store moves the object by rkey out of or into a buffer the client registered once) against the
# HTTP-body path, for 1 MiB and 64 MiB objects. Prints the raw figures, then one JSON document between
# the lines BENCH-JSON-BEGIN and BENCH-JSON-END. Exits non-zero if a transfer failed.
#
# Runs in a guest booted against a server with --backend s3 and a TAP whose host end is 192.168.200.3
# with an iperf3 server and guest/bench/host-http.py on port 9000 (ernic.it.bench.GuestBench s3, section 7 of
# ./ernic bench).
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

ernic-ionic-up $GUEST_IP >/dev/null
ping -c 1 -W 5 $STORE_IP >/dev/null || { echo "S3-BENCH: the store does not answer ping"; exit 3; }
ping -c 1 -W 5 $HOST_IP >/dev/null || { echo "S3-BENCH: the TAP's host end does not answer ping"; exit 3; }

# The reference: TCP between this guest and the host over the TAP, 256 MiB each way.
for a in 1 2 3; do iperf3 -c $HOST_IP -n 256M -J >$RAW/iperf-up.json 2>&1 && break; sleep 1; done
for a in 1 2 3; do iperf3 -c $HOST_IP -n 256M -R -J >$RAW/iperf-down.json 2>&1 && break; sleep 1; done

# The HTTP-body path: curl's own transfer time (not its process start), one connection per request.
dd if=/dev/urandom of=/tmp/obj-1m bs=1M count=1 status=none
dd if=/dev/urandom of=/tmp/obj-64m bs=1M count=64 status=none
# fresh URL SIZE REPS FILE: REPS PUTs of /tmp/obj-SIZE to URL, then REPS GETs of it, each on a new connection,
# one row each in FILE; then one more GET into a file, not timed, compared with what was PUT (the timed GETs
# drop the body as iperf3 does: a file write in the guest is not the server's).
fresh() {
    local url=$1 size=$2 reps=$3 file=$4 i
    for i in $(seq 1 "$reps"); do
        curl -sS -f -o /dev/null -w "put $size %{http_code} %{size_upload} %{time_total}\n" -T /tmp/obj-$size \
            -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$url" >>"$file"
    done
    for i in $(seq 1 "$reps"); do
        curl -sS -f -o /dev/null -w "get $size %{http_code} %{size_download} %{time_total}\n" "$url" >>"$file"
    done
    curl -sS -f -o /tmp/back-$size "$url" && cmp -s /tmp/obj-$size /tmp/back-$size && echo "http-exact $size" >>"$file"
}
# kept URL FILE: the same 1 MiB requests on one connection (curl reuses it across the URLs of one command), as
# the SDKs and the aws cli do with their connection pools: no handshake and no fresh slow start per request.
kept() {
    local url=$1 file=$2 i args=()
    for i in $(seq 1 $REPS_1M); do args+=(-o /dev/null -T /tmp/obj-1m "$url"); done
    curl -sS -f -w "put 1m %{http_code} %{size_upload} %{time_total}\n" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "${args[@]}" >>"$file"
    args=()
    for i in $(seq 1 $REPS_1M); do args+=(-o /dev/null "$url"); done
    curl -sS -f -w "get 1m %{http_code} %{size_download} %{time_total}\n" "${args[@]}" >>"$file"
    curl -sS -f -o /tmp/back-ka-1m "$url" && cmp -s /tmp/obj-1m /tmp/back-ka-1m && echo "http-exact 1m" >>"$file"
}
# One request of each kind first, not counted: the server's code for it is compiled by then (the JIT), as
# it is in a server that has been up for a while.
warm_up() {
    curl -sS -f -o /dev/null -T /tmp/obj-1m -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$1"
    curl -sS -f -o /dev/null "$1"
}
: >$RAW/curl.txt
: >$RAW/curl-keepalive.txt
warm_up $EP/warm-up
fresh $EP/bench-1m 1m $REPS_1M $RAW/curl.txt
fresh $EP/bench-64m 64m $REPS_64M $RAW/curl.txt
kept $EP/bench-ka-1m $RAW/curl-keepalive.txt
cat $RAW/curl.txt | sort | uniq -c | sort -rn | head -4

# The like-for-like reference for 1 MiB: the same curl requests against an HTTP server on the host end of the
# TAP (guest/bench/host-http.py), so the host kernel's TCP where the store's was, over the same emulated NIC.
# What a fresh connection costs the guest under TCG is in both; iperf3 pays it once for 256 MiB.
HOST_EP=http://$HOST_IP:9000/ref
: >$RAW/host-curl.txt
: >$RAW/host-curl-keepalive.txt
warm_up $HOST_EP/warm-up
fresh $HOST_EP/bench-1m 1m $REPS_1M $RAW/host-curl.txt
kept $HOST_EP/bench-ka-1m $RAW/host-curl-keepalive.txt

# The token path: one registered 64 MiB buffer, one HTTP connection; each request moves its object by rkey.
# A small C client: the guest runs under TCG, where an interpreted client's own time per request (pyverbs and
# http.client: 10-40 ms) would be most of what a 1 MiB request measures.
cat >/tmp/s3tok.c <<'C'
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define N (64u << 20)
static int fd;
static char hex[89], rbuf[8192];

static void die(const char *what) { perror(what); exit(1); }

/* transport RC, QPN, GID, rkey, address, length, port, LID: 44 bytes little-endian, 88 hex (docs/s3.md) */
static void token(const uint8_t gid[16], uint32_t rkey, uint64_t addr, uint64_t len) {
    uint8_t t[44] = {1}, *p = t + 5;
    memcpy(p, gid, 16); p += 16;
    for (int i = 0; i < 4; i++) *p++ = rkey >> 8 * i;
    for (int i = 0; i < 8; i++) *p++ = addr >> 8 * i;
    for (int i = 0; i < 8; i++) *p++ = len >> 8 * i;
    *p = 1; /* port; the LID stays 0 */
    for (int i = 0; i < 44; i++) sprintf(hex + 2 * i, "%02x", t[i]);
}

/* A field of the reply's head (cut at its blank line); -1 when absent. */
static long header(const char *head, const char *name) {
    for (const char *l = strstr(head, "\r\n"); l; l = strstr(l + 2, "\r\n"))
        if (!strncasecmp(l + 2, name, strlen(name)) && l[2 + strlen(name)] == ':')
            return atol(l + 3 + strlen(name));
    return -1;
}

/* One request on the kept connection; returns the status and the seconds it took, sets *moved. */
static int req(const char *method, const char *key, const char *store, double *dt, long *moved) {
    char q[512];
    int n = snprintf(q, sizeof q, "%s /ernic/%s HTTP/1.1\r\nHost: %s:9000\r\nx-amz-content-sha256: UNSIGNED-PAYLOAD\r\n"
                     "x-amz-rdma-token: %s\r\n%s\r\n", method, key, store, hex,
                     method[0] == 'P' ? "Content-Length: 0\r\n" : "");
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (write(fd, q, n) != n) die("write");
    int got = 0;
    char *end;
    while (!(end = memmem(rbuf, got, "\r\n\r\n", 4))) {
        int r = read(fd, rbuf + got, sizeof rbuf - 1 - got);
        if (r <= 0) die("read");
        got += r;
    }
    *end = 0;
    long body = header(rbuf, "content-length"), have = got - (end + 4 - rbuf);
    int status = atoi(rbuf + 9); /* read before an error's body takes the buffer */
    *moved = header(rbuf, "x-amz-rdma-bytes-transferred");
    while (have < body) {
        int r = read(fd, rbuf, body - have < (long) sizeof rbuf ? body - have : (long) sizeof rbuf);
        if (r <= 0) die("read");
        have += r;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    *dt = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    return status;
}

int main(int argc, char **argv) {
    const char *store = argv[1];
    int reps[2] = {atoi(argv[2]), atoi(argv[3])};
    struct ibv_device **l = ibv_get_device_list(NULL);
    struct ibv_context *ctx = NULL;
    for (int i = 0; l && l[i]; i++)
        if (!strcmp(ibv_get_device_name(l[i]), "ionic_0")) ctx = ibv_open_device(l[i]);
    if (!ctx) die("ionic_0");
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    uint8_t *buf, *data = malloc(N);
    if (!pd || posix_memalign((void **) &buf, 4096, N) || !data) die("alloc");
    FILE *r = fopen("/dev/urandom", "r");
    if (!r || fread(data, 1, N, r) != N) die("urandom");
    memcpy(buf, data, N);
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, N, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    union ibv_gid gid;
    if (!mr || ibv_query_gid(ctx, 1, 1, &gid)) die("ibv_reg_mr/ibv_query_gid");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9000)};
    inet_pton(AF_INET, store, &sa.sin_addr);
    int one = 1;
    fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *) &sa, sizeof sa)) die("connect");
    double dt;
    long moved;
    /* One PUT and one GET first, not counted (the JIT, as for curl above). */
    token(gid.raw, mr->rkey, (uintptr_t) buf, 1 << 20);
    req("PUT", "tok-warm-up", store, &dt, &moved);
    req("GET", "tok-warm-up", store, &dt, &moved);
    for (int s = 0; s < 2; s++) {
        unsigned size = s ? N : 1u << 20;
        const char *name = s ? "64m" : "1m";
        char key[16];
        snprintf(key, sizeof key, "tok-%s", name);
        token(gid.raw, mr->rkey, (uintptr_t) buf, size);
        for (int m = 0; m < 2; m++) {
            if (m) memset(buf, 0, size);
            for (int i = 0; i < reps[s]; i++) {
                int st = req(m ? "GET" : "PUT", key, store, &dt, &moved);
                printf("token %s %s %d %ld %.6f\n", m ? "get" : "put", name, st, moved, dt);
            }
            if (m) printf("token-exact %s %s\n", name, memcmp(buf, data, size) ? "False" : "True");
            fflush(stdout);
        }
    }
    return 0;
}
C
# A build failure lands in token.txt too, where the summary below finds no token rows and fails the run.
{ gcc -O2 -Wall -o /tmp/s3tok /tmp/s3tok.c -libverbs && /tmp/s3tok $STORE_IP $REPS_1M $REPS_64M; } >$RAW/token.txt 2>&1
tail -n 3 $RAW/token.txt
echo "S3-BENCH: took $(( $(date +%s) - t0 )) s"

python3 - "$RAW" <<'PY'
import json, os, sys
raw = sys.argv[1]
doc = {"tool": "curl, iperf3, a C verbs client", "units": {"throughput": "MB/s (10^6 bytes)"},
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
for path, kind in (("curl.txt", "http"), ("curl-keepalive.txt", "http-keepalive"), ("token.txt", "token"),
                   ("host-curl.txt", "host-http"), ("host-curl-keepalive.txt", "host-http-keepalive")):
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
expected = {(k, op, size) for k in ("http", "token") for op in ("put", "get") for size in ("1m", "64m")}
expected |= {(k, op, "1m") for k in ("http-keepalive", "host-http", "host-http-keepalive") for op in ("put", "get")}
doc["missing"] = sorted("%s %s %s" % m for m in expected - by.keys())
ok &= not doc["missing"]
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
        for store, host, how in (("http", "host-http", "fresh connections"), ("http-keepalive", "host-http-keepalive", "one connection")):
            a, b = by.get((store, op, size)), by.get((host, op, size))
            if a and b and a["ok"] and b["ok"]:
                doc["ratios"].append({"size": size, "op": op, "value": round(a["MB_s"] / b["MB_s"], 3),
                                      "metric": "HTTP body over the same curl against an HTTP server on the host over the TAP, " + how})
        if k and t and k["ok"] and t["ok"]:
            doc["ratios"].append({"size": size, "op": op, "metric": "token path over HTTP body, both on one connection",
                                  "value": round(t["MB_s"] / k["MB_s"], 3), "aim": ">= 5"})
doc["all_ok"] = bool(ok)
print("BENCH-JSON-BEGIN")
print(json.dumps(doc, indent=1, allow_nan=False))
print("BENCH-JSON-END")
sys.exit(0 if ok else 4)
PY
