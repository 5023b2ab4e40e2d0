package ernic.it.model;

import ernic.common.InternetChecksum;
import ernic.ionic.IonicDevice;
import ernic.model.EthQueue;
import ernic.model.IonicDriverModel;
import ernic.server.ErnicServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --backend s3} wired into a real server, seen from the driver model over the socket (no VM): the
 * store claims the frames the guest transmits to it and its answers arrive in the guest's RX ring.
 */
class S3WireTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    Path tmp;

    static final int DEPTH_LOG2 = 6, BUF = 2048;
    static final byte[] STORE_IP = {(byte) 192, (byte) 168, (byte) 200, 1}, GUEST_IP = {(byte) 192, (byte) 168, (byte) 200, 2};
    static final byte[] STORE_MAC = {0x02, 0x53, (byte) 0xc0, (byte) 0xa8, (byte) 0xc8, 0x01};

    ErnicServer server;
    IonicDriverModel drv;
    EthQueue tx, rx;
    long rxBufs;
    byte[] station = new byte[6];

    @BeforeEach
    void start() throws Exception {
        server = ErnicServer.start(ErnicServer.Settings.ionic(tmp.resolve("ernic.sock").toString()).withBackend("s3"));
        drv = IonicDriverModel.connect(server.vfioUser().socketPath());
        drv.bringUp();
        long mac = drv.probeLif().mac();
        for (int i = 0; i < 6; i++) {
            station[i] = (byte) (mac >>> 8 * (5 - i));
        }
        tx = EthQueue.tx(drv, 1, 0, 1, DEPTH_LOG2);
        rx = EthQueue.rx(drv, 0, 0, 1, DEPTH_LOG2);
        rxBufs = drv.alloc((long) BUF << DEPTH_LOG2);
        rx.postRx(rxBufs, BUF, (1 << DEPTH_LOG2) - 1);
        assertThat(rx.control(true)).isZero();
        assertThat(tx.control(true)).isZero();
    }

    @AfterEach
    void stop() {
        drv.close();
        server.close();
    }

    @Test
    void arpAndPingAreAnsweredIntoTheRxRing() throws Exception {
        ByteBuffer arp = frame(new byte[] {-1, -1, -1, -1, -1, -1}, 0x0806, 28);
        arp.putShort(14, (short) 1).putShort(16, (short) 0x0800).put(18, (byte) 6).put(19, (byte) 4)
                .putShort(20, (short) 1).put(22, station).put(28, GUEST_IP).put(38, STORE_IP);
        byte[] reply = transmitAndReceive(arp.array());
        ByteBuffer r = ByteBuffer.wrap(reply);
        assertThat(slice(reply, 0, 6)).as("to the asker").isEqualTo(station);
        assertThat(slice(reply, 6, 6)).isEqualTo(STORE_MAC);
        assertThat(r.getShort(12)).isEqualTo((short) 0x0806);
        assertThat(r.getShort(20)).as("ARP reply").isEqualTo((short) 2);
        assertThat(slice(reply, 22, 6)).isEqualTo(STORE_MAC);
        assertThat(slice(reply, 28, 4)).isEqualTo(STORE_IP);

        ByteBuffer ping = frame(STORE_MAC, 0x0800, 20 + 8 + 32);
        ping.put(14, (byte) 0x45).putShort(16, (short) 60).put(22, (byte) 64).put(23, (byte) 1)
                .put(26, GUEST_IP).put(30, STORE_IP);
        ping.putShort(24, (short) InternetChecksum.of(ping.array(), 14, 20, 0));
        ping.put(34, (byte) 8).putShort(38, (short) 0x1234).putShort(40, (short) 7);
        for (int i = 0; i < 32; i++) {
            ping.put(42 + i, (byte) i);
        }
        ping.putShort(36, (short) InternetChecksum.of(ping.array(), 34, 40, 0));
        byte[] echo = transmitAndReceive(ping.array());
        ByteBuffer e = ByteBuffer.wrap(echo);
        assertThat(slice(echo, 0, 6)).isEqualTo(station);
        assertThat(slice(echo, 26, 4)).isEqualTo(STORE_IP);
        assertThat(slice(echo, 30, 4)).isEqualTo(GUEST_IP);
        assertThat(e.get(34)).as("echo reply").isZero();
        assertThat(e.getShort(38)).isEqualTo((short) 0x1234);
        assertThat(slice(echo, 42, 32)).isEqualTo(slice(ping.array(), 42, 32));

        Map<String, Long> c = server.vfioUser().eventLoop().submit(() -> server.counterRegistry().totals()).get();
        assertThat(c).containsEntry("s3.net.arp_replies", 1L).containsEntry("s3.net.icmp_echo_replies", 1L)
                .containsEntry("eth.device.tx_claimed", 2L).containsEntry("eth.device.guest_queue_delivered", 2L)
                .containsEntry("eth.device.tx_discarded", 0L);
        assertThat(((IonicDevice) server.device()).counters()).containsEntry("device.tx_claimed", 2L);
    }

    /** Sends one frame on the TX queue and returns the one frame the RX ring then holds. */
    byte[] transmitAndReceive(byte[] frame) throws Exception {
        tx.transmit(frame);
        drv.sync();
        assertThat(tx.next()).as("TX completion").isNotNull();
        EthQueue.Comp comp = rx.next();
        assertThat(comp).as("the store's answer in the RX ring").isNotNull();
        assertThat(comp.status()).isZero();
        assertThat(rx.next()).as("one answer").isNull();
        return drv.mem(rxBufs + (long) comp.compIndex() * BUF, comp.len()).toArray(ValueLayout.JAVA_BYTE);
    }

    /** An Ethernet frame from the station, padded to the 60-byte minimum. */
    ByteBuffer frame(byte[] dst, int type, int payload) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(60, 14 + payload));
        b.put(0, dst).put(6, station).putShort(12, (short) type);
        return b;
    }

    static byte[] slice(byte[] b, int at, int n) {
        return java.util.Arrays.copyOfRange(b, at, at + n);
    }
}
