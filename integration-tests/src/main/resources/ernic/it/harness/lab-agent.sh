# The guest side of `./ernic up` (appended to the lines that export ERNIC_GUEST_IP and friends): brings
# the NIC and RDMA up, mounts the shared directory, keeps a root shell on the virtio console for
# `./ernic shell K`, then runs each command `./ernic shell K -- CMD` drops into /job/lab/cmd until the
# lab goes down. Under TCG every exec costs 0.1-0.5 s: the waiting loop uses bash builtins only.
set -u
lab=/job/lab
mkdir -p "$lab/cmd"
modprobe ionic
modprobe ionic_rdma
dev=$(lspci -D -n -d 1dd8:1002 | awk '{print $1}' | head -n1)
if [[ -n $dev ]]; then
    nd=$(ls "/sys/bus/pci/devices/$dev/net/")
    ip link set "$nd" up
    if [[ -n ${ERNIC_GUEST_IP:-} ]]; then
        ip addr add "$ERNIC_GUEST_IP/24" dev "$nd"
    fi
    for _ in $(seq 1 60); do [[ -e /sys/class/infiniband/ionic_0 ]] && break; sleep 0.5; done
    for _ in $(seq 1 60); do grep -q ACTIVE /sys/class/infiniband/ionic_0/ports/1/state 2>/dev/null && break; sleep 0.5; done
    echo "lab: $nd ${ERNIC_GUEST_IP:-without an address}, $(cat /sys/class/infiniband/ionic_0/ports/1/state 2>/dev/null || echo 'no RDMA device')"
fi
home=/root
if [[ ${ERNIC_LAB_SHARE:-0} == 1 ]]; then
    mkdir -p /share
    if mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap share /share; then
        home=/share
        echo "lab: the shared directory is at /share"
    else
        echo "lab: cannot mount the shared directory"
    fi
fi
if [[ -e /dev/hvc0 ]]; then
    # The interactive shell: a new one whenever the last one ends.
    (
        while :; do
            cd "$home" && TERM=xterm-256color setsid -c -w bash -il <>/dev/hvc0 >&0 2>&0
            sleep 1
        done
    ) &
fi
echo "ready" >"$lab/ready"
echo "lab: ready"
mkfifo /tmp/lab-tick
exec 9<>/tmp/lab-tick
while [[ ! -e $lab/stop ]]; do
    for f in "$lab"/cmd/*.sh; do
        [[ -e $f ]] || continue
        id=${f%.sh}
        mv "$f" "$id.run" 2>/dev/null || continue
        (
            cd "$home" && bash "$id.run" >"$id.out" 2>&1 </dev/null
            echo $? >"$id.rc.tmp"
            mv "$id.rc.tmp" "$id.rc"
        ) &
    done
    read -r -t 0.2 -u 9 _ || true
done
echo "lab: stopping"
