package ernic.it.guest;

/** Pieces of guest scripts that several real-guest tests share. */
final class GuestScripts {
    private GuestScripts() {}

    /**
     * Loads ionic and ionic_rdma, brings the ionic netdev ({@code $nd}, PCI address {@code $dev}) up
     * with {@code ip}/24, and waits for {@code ionic_0}'s port to be ACTIVE.
     */
    static String rdmaUp(String ip) {
        return """
                modprobe ionic
                modprobe ionic_rdma
                dev=$(lspci -D -n -d 1dd8:1002 | awk '{print $1}')
                nd=$(ls /sys/bus/pci/devices/$dev/net/)
                ip link set "$nd" up
                ip addr add %s/24 dev "$nd"
                for i in $(seq 1 40); do [ -e /sys/class/infiniband/ionic_0 ] && break; sleep 0.5; done
                for i in $(seq 1 40); do grep -q ACTIVE /sys/class/infiniband/ionic_0/ports/1/state && break; sleep 0.5; done
                """.formatted(ip);
    }
}
