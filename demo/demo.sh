# The demo: runs in the guest as root (./ernic demo). The guest has no RDMA hardware; its NIC is the
# ionic device our server emulates, and every byte below is moved by that server.
set -e
say() { printf '\n=== %s\n' "$*"; }

say "The emulated NIC, as the guest's PCI bus shows it"
lspci -nn -d 1dd8:

say "The stock drivers bind: ionic (Ethernet), then ionic_rdma (RDMA)"
modprobe ionic
modprobe ionic_rdma
ip link set eth0 up
ip addr add "${ERNIC_GUEST_IP:-192.168.77.1}/24" dev eth0
for i in $(seq 1 60); do grep -q ACTIVE /sys/class/infiniband/ionic_0/ports/1/state 2>/dev/null && break; sleep 0.5; done
dmesg | grep -E 'ionic.*(Link up|Link ACTIVE|FW:)'
ethtool eth0 | grep -E 'Speed|Link detected'

say "rdma-core sees an RDMA device (ibv_devices, ibv_devinfo)"
ibv_devices
ibv_devinfo -d ionic_0 | grep -E 'hca_id|fw_ver|node_guid|state|link_layer|active_mtu'

say "An RC ping-pong between two processes, through the emulated NIC (ibv_rc_pingpong)"
ibv_rc_pingpong -d ionic_0 -g 1 -n 200 -s 4096 > /tmp/pp-server.txt 2>&1 &
sleep 2
ibv_rc_pingpong -d ionic_0 -g 1 -n 200 -s 4096 localhost
wait $!

say "RDMA WRITE bandwidth (ib_write_bw, 64 KiB messages)"
ib_write_bw -d ionic_0 -x 1 -s 65536 -n 500 > /tmp/bw-server.txt 2>&1 &
sleep 2
ib_write_bw -d ionic_0 -x 1 -s 65536 -n 500 localhost | grep -A1 -E '#bytes'
wait $!

say "Done: RDMA verbs in a guest with no RDMA hardware. The guest runs under TCG, a software CPU, so these
    figures say little about speed; ./ernic bench measures it against same-run references (docs/performance.md)."
