#!/bin/bash
# Six rping rounds across the mesh: guest 0 the server, guest 1 the client.
# Run: ./ernic guest run --vms 2 tools/repro/rping-mesh-loop.sh
# It reproduced the admin-command time-out of issue 6 ("admin command timed out, aq N after: 4ms",
# "wait status -110", then an RDMA LIF reset) in about one run of three. The cause was the guest's
# delay loop: under TCG secondary vCPUs calibrated it far too low, so ionic_rdma's 2000 x mdelay(1)
# busy-wait for a CREATE_AH or DESTROY_AH ran out after a few ms (kprobes on ionic_admin_wait and
# ionic_admin_timedout showed 3 ms). ernic-vm now passes lpj= (guest/README.md); since then 12 runs,
# 72 rounds, passed on a loaded host. Kept as a quick loop for rdma_cm across the mesh.
ernic-ionic-up $ERNIC_GUEST_IP >/dev/null
peer=192.168.77.$(( (ERNIC_VM_INDEX + 1) % 2 + 1 ))
for i in $(seq 1 60); do ping -c 1 -W 1 $peer > /dev/null && break; sleep 1; done
for r in 1 2 3 4 5 6; do
  p=$((18700 + r))
  if [ "$ERNIC_VM_INDEX" = 0 ]; then
    timeout 60 rping -s -a 192.168.77.1 -C 3 -p $p > /tmp/r.txt 2>&1; echo "ROUND $r server=$? $(date +%s.%N)"
  else
    end=$(( $(date +%s) + 60 ))
    while :; do timeout 30 rping -c -a 192.168.77.1 -C 3 -p $p > /tmp/r.txt 2>&1 && { c=0; break; } || c=$?; [ $(date +%s) -lt $end ] || break; sleep 1; done
    echo "ROUND $r client=$c $(date +%s.%N)"
  fi
done
dmesg | grep -i "admin command timed out\|wait status" || echo "NO-ADMIN-TIMEOUT"
