# The guest side of `./ernic up` (appended to the lines that export ERNIC_GUEST_IP and friends): brings
# the NIC and RDMA up, mounts the shared directory, keeps a root shell on the virtio console for
# `./ernic shell K`, then runs each command `./ernic shell K -- CMD` drops into /job/lab/cmd until the
# lab goes down. Under TCG every exec costs 0.1-0.5 s: the waiting loop uses bash builtins only.
set -u
lab=/job/lab
mkdir -p "$lab/cmd"
if nd=$(ernic-ionic-up ${ERNIC_GUEST_IP:-}) || [[ -n $nd ]]; then
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
