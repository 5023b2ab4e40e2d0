package ernic.s3;

import ernic.ipstack.StreamHandler;

import ernic.ipstack.NetCounter;

import ernic.ipstack.TcpConnection;

import ernic.ipstack.IpEndpoint;

import static ernic.s3.GuestFrames.GUEST_MAC;
import static ernic.s3.GuestFrames.STORE_IP;
import static ernic.s3.GuestFrames.STORE_MAC;
import static ernic.s3.GuestTcp.ACK;
import static ernic.s3.GuestTcp.FIN;
import static ernic.s3.GuestTcp.RST;
import static ernic.s3.GuestTcp.SYN;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class IpEndpointTest {
    /** Echoes what it reads, within the send buffer; closes after the peer's FIN. */
    static final class Echo implements StreamHandler {
        final TcpConnection c;
        final byte[] buf = new byte[40_000];
        int pending, at;
        boolean closed, reading = true;

        Echo(TcpConnection c) {
            this.c = c;
        }

        @Override
        public void onReadable() {
            pump();
        }

        @Override
        public void onWritable() {
            pump();
        }

        void pump() {
            while (true) {
                if (pending > 0) {
                    int n = c.write(buf, at, pending);
                    at += n;
                    pending -= n;
                    if (pending > 0) {
                        return;
                    }
                }
                if (!reading) {
                    return;
                }
                int n = c.read(buf, 0, buf.length);
                if (n == 0) {
                    if (c.atEof()) {
                        c.close();
                    }
                    return;
                }
                pending = n;
                at = 0;
            }
        }

        @Override
        public void onClosed() {
            closed = true;
        }
    }

    final List<Echo> apps = new ArrayList<>();
    final Rig rig = new Rig(c -> {
        Echo e = new Echo(c);
        apps.add(e);
        return e;
    });

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void answersArpForItsAddressOnly() {
        assertThat(rig.send(GuestFrames.arpRequest(0xc0a8c863))).isFalse();
        assertThat(rig.send(GuestFrames.arpRequest(STORE_IP))).isTrue();
        rig.deliver();
        byte[] r = rig.unclaimed.poll();
        assertThat(r).isNotNull();
        ByteBuffer b = ByteBuffer.wrap(r);
        assertThat(Arrays.copyOfRange(r, 0, 6)).isEqualTo(GUEST_MAC);
        assertThat(Arrays.copyOfRange(r, 6, 12)).isEqualTo(STORE_MAC);
        assertThat(b.getShort(12)).isEqualTo((short) 0x0806);
        assertThat(b.getShort(20)).isEqualTo((short) 2); // reply
        assertThat(Arrays.copyOfRange(r, 22, 28)).isEqualTo(STORE_MAC);
        assertThat(b.getInt(28)).isEqualTo(STORE_IP);
        assertThat(Arrays.copyOfRange(r, 32, 38)).isEqualTo(GUEST_MAC);
        assertThat(b.getInt(38)).isEqualTo(GuestFrames.GUEST_IP);
        assertThat(rig.net.get(NetCounter.ARP_REPLIES)).isEqualTo(1);
    }

    @Test
    void answersPing() {
        byte[] payload = random(56, 1);
        rig.send(GuestFrames.echoRequest(0x1234, 7, payload));
        rig.deliver();
        byte[] r = rig.unclaimed.poll();
        ByteBuffer b = ByteBuffer.wrap(r);
        assertThat(b.getInt(26)).isEqualTo(STORE_IP);
        assertThat(b.getInt(30)).isEqualTo(GuestFrames.GUEST_IP);
        assertThat(GuestFrames.checksum(r, 14, 20, 0)).isZero();
        int icmpLen = (b.getShort(16) & 0xffff) - 20;
        assertThat(icmpLen).isEqualTo(64);
        assertThat(GuestFrames.checksum(r, 34, icmpLen, 0)).isZero();
        assertThat(r[34]).isEqualTo((byte) 0); // echo reply
        assertThat(b.getShort(38)).isEqualTo((short) 0x1234);
        assertThat(b.getShort(40)).isEqualTo((short) 7);
        assertThat(Arrays.copyOfRange(r, 42, 42 + 56)).isEqualTo(payload);
    }

    @Test
    void synAckCarriesMssAndWindowScale() {
        GuestTcp g = rig.connect(40000);
        rig.run(() -> g.established, 1000);
        GuestFrames.Segment s = g.synAck;
        assertThat(s.has(SYN) && s.has(ACK)).isTrue();
        assertThat(s.ack()).isEqualTo(g.iss + 1);
        assertThat(g.peerMss).isEqualTo(1460);
        assertThat(g.peerShift).isEqualTo(TcpConnection.RCV_SHIFT);
        // after the handshake the scaled window is the whole 1 MiB buffer: more than 16 bits can say
        rig.deliver();
        g.write(new byte[1]);
        rig.run(g::allAcked, 1000);
        assertThat(g.peerWindow).isGreaterThan(65535);
    }

    @Test
    void noWindowScaleUnlessOffered() {
        GuestTcp g = new GuestTcp(rig, 40001);
        g.offerWindowScale = false;
        rig.guests.put(40001, g);
        g.connect();
        rig.run(() -> g.established, 1000);
        assertThat(g.synAck.options()).hasSize(4); // MSS only
        g.write(new byte[1]);
        rig.run(g::allAcked, 1000);
        assertThat(g.peerWindow).isLessThanOrEqualTo(65535);
    }

    @Test
    void closedPortGetsReset() {
        byte[] syn = GuestFrames.tcp(5555, 80, 1000, 0, SYN, 65535, new byte[0], new byte[0]);
        assertThat(rig.send(syn)).isTrue();
        rig.deliver();
        GuestFrames.Segment s = GuestFrames.parseTcp(rig.unclaimed.poll());
        assertThat(s.has(RST) && s.has(ACK)).isTrue();
        assertThat(s.ack()).isEqualTo(1001);
        assertThat(s.sport()).isEqualTo(80);
    }

    @Test
    void echoesAMebibyteOverALosslessLink() {
        GuestTcp g = rig.connect(40002);
        byte[] data = random(1 << 20, 2);
        g.write(data);
        rig.run(() -> g.receivedSize() == data.length, 5000);
        assertThat(g.receivedBytes()).isEqualTo(data);
        assertThat(rig.net.get(NetCounter.RETRANSMITS)).isZero();
        assertThat(rig.net.get(NetCounter.DROP_TCP_CHECKSUM)).isZero();
    }

    @Test
    void recoversFromALossyLink() {
        rig.lossToGuest = 0.05;
        rig.lossToStore = 0.05;
        GuestTcp g = rig.connect(40003);
        byte[] data = random(256 * 1024, 3);
        g.write(data);
        rig.run(() -> g.receivedSize() == data.length, 600_000);
        assertThat(g.receivedBytes()).isEqualTo(data);
        assertThat(rig.lostToGuest).isPositive();
        assertThat(rig.lostToStore).isPositive();
        assertThat(rig.net.get(NetCounter.RETRANSMITS)).isPositive();
        assertThat(rig.net.get(NetCounter.OUT_OF_ORDER)).isPositive();
    }

    @Test
    void serves100ConnectionsAtOnceAndRefusesPastTheLimit() {
        List<GuestTcp> gs = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            GuestTcp g = rig.connect(41000 + i);
            g.write(random(5000, i));
            gs.add(g);
        }
        rig.run(() -> gs.stream().allMatch(g -> g.receivedSize() == 5000), 10_000);
        for (int i = 0; i < 100; i++) {
            assertThat(gs.get(i).receivedBytes()).isEqualTo(random(5000, i));
        }
        assertThat(rig.endpoint.connectionCount()).isEqualTo(100);
        assertThat(rig.net.get(NetCounter.CONNECTIONS_OPEN)).isEqualTo(100);
        for (int i = 100; i < IpEndpoint.MAX_CONNECTIONS; i++) {
            rig.connect(41000 + i);
        }
        rig.run(() -> rig.endpoint.connectionCount() == IpEndpoint.MAX_CONNECTIONS, 1000);
        GuestTcp over = rig.connect(42000);
        rig.run(() -> over.reset, 1000);
        assertThat(rig.net.get(NetCounter.CONNECTIONS_REFUSED)).isEqualTo(1);
    }

    @Test
    void closesBothWaysWithFin() {
        GuestTcp g = rig.connect(40004);
        g.write("hello".getBytes());
        g.close();
        rig.run(() -> g.peerFin, 1000);
        assertThat(new String(g.receivedBytes())).isEqualTo("hello");
        rig.run(() -> rig.endpoint.connectionCount() == 0, 1000);
        assertThat(apps.getFirst().closed).isTrue();
    }

    @Test
    void aResetAbortsTheConnection() {
        GuestTcp g = rig.connect(40005);
        rig.run(() -> g.established, 1000);
        rig.deliver();
        rig.send(g.raw(g.sndNxt, g.rcvNxt, RST | ACK, new byte[0]));
        assertThat(rig.endpoint.connectionCount()).isZero();
        assertThat(apps.getFirst().closed).isTrue();
        assertThat(rig.net.get(NetCounter.RESETS_IN)).isEqualTo(1);
    }

    @Test
    void anOutOfWindowResetIsIgnored() {
        GuestTcp g = rig.connect(40006);
        rig.run(() -> g.established, 1000);
        rig.send(g.raw(g.sndNxt + 1_000_000, 0, RST, new byte[0]));
        assertThat(rig.endpoint.connectionCount()).isEqualTo(1);
    }

    @Test
    void retransmitsAndFinallyGivesUp() {
        GuestTcp g = rig.connect(40007);
        rig.run(() -> g.established, 1000);
        rig.lossToGuest = 1.0; // the guest hears nothing more
        g.write(new byte[3000]);
        rig.deliver();
        rig.run(() -> rig.net.get(NetCounter.RETRANSMITS) >= 1, 1000);
        rig.run(() -> rig.endpoint.connectionCount() == 0, 120_000);
        assertThat(rig.net.get(NetCounter.TIMEOUTS)).isEqualTo(1);
        assertThat(rig.net.get(NetCounter.RETRANSMITS)).isEqualTo(TcpConnection.MAX_RETRIES);
    }

    @Test
    void segmentsOfOneDoorbellGetOneCumulativeAck() {
        GuestTcp g = rig.connect(40013);
        rig.run(() -> g.established, 1000);
        rig.deliver();
        apps.getFirst().reading = false; // no echo: the only answer is the ACK
        int seq = g.sndNxt;
        for (int i = 0; i < 10; i++) { // ten segments offered in one TX batch (no end of batch between them)
            byte[] f = g.raw(seq + i * 1000, g.rcvNxt, ACK, random(1000, i));
            assertThat(rig.endpoint.receive(f, f.length)).isTrue();
        }
        assertThat(rig.toGuest).isEmpty();
        rig.endpoint.endOfBatch();
        assertThat(rig.toGuest).hasSize(1);
        GuestFrames.Segment ackSeg = GuestFrames.parseTcp(rig.toGuest.poll());
        assertThat(ackSeg.has(ACK)).isTrue();
        assertThat(ackSeg.data()).isEmpty();
        assertThat(ackSeg.ack()).isEqualTo(seq + 10_000);
    }

    @Test
    void dataWaitsWhileTheGuestQueueIsFullButAcksGo() {
        GuestTcp g = rig.connect(40014);
        rig.run(() -> g.established, 1000);
        rig.deliver();
        rig.guestRoom = IpEndpoint.CONTROL_RESERVE; // only control frames fit
        byte[] data = random(20_000, 9);
        g.write(data);
        rig.deliver(); // the guest's segments arrive; the echo has data to send back but no room
        assertThat(g.allAcked()).isTrue(); // its ACKs still went
        assertThat(g.receivedSize()).isZero();
        assertThat(rig.net.get(NetCounter.SINK_FULL)).isPositive();
        rig.guestRoom = Integer.MAX_VALUE;
        rig.run(() -> g.receivedSize() == data.length, 1000); // the endpoint's tick sends it
        assertThat(g.receivedBytes()).isEqualTo(data);
        assertThat(rig.net.get(NetCounter.RETRANSMITS)).isZero();
    }

    /** Runs the link until nothing moves, never advancing time: no tick, no retransmission timer. */
    private void untilIdle() {
        while (rig.deliver()) {
            // another round
        }
    }

    @Test
    void dataHeldForAFullGuestQueueGoesAsSoonAsItHasRoomAgain() {
        GuestTcp g = rig.connect(40015);
        rig.run(() -> g.established, 1000);
        rig.deliver();
        rig.guestRoom = IpEndpoint.CONTROL_RESERVE; // the guest's queue is full: only control frames fit
        byte[] data = random(20_000, 10);
        g.write(data);
        untilIdle(); // the guest's segments arrive and are acknowledged; the echo has no room for its data
        assertThat(g.allAcked()).isTrue();
        assertThat(g.receivedSize()).isZero();
        rig.guestRoom = Integer.MAX_VALUE; // the guest posted RX buffers, but nobody has said so yet
        assertThat(rig.deliver()).isFalse();
        rig.endpoint.roomAgain(); // what the device does once its backlog went into those buffers
        untilIdle();
        assertThat(g.receivedSize()).isEqualTo(data.length);
        assertThat(g.receivedBytes()).isEqualTo(data);
        assertThat(g.dupAcksSent).isZero(); // every segment arrived in order
        assertThat(rig.net.get(NetCounter.RETRANSMITS)).isZero();
        assertThat(rig.net.get(NetCounter.ROOM_WAKES)).isEqualTo(1);
    }

    @Test
    void roomAgainWakesOnlyStoppedConnectionsOldestFirstAndTakesTurns() {
        GuestTcp a = rig.connect(40016), b = rig.connect(40017), idle = rig.connect(40018);
        rig.run(() -> a.established && b.established && idle.established, 1000);
        untilIdle();
        rig.guestRoom = IpEndpoint.CONTROL_RESERVE;
        byte[] dataA = random(20_000, 11), dataB = random(20_000, 12);
        a.write(dataA);
        untilIdle(); // a stops first
        b.write(dataB);
        untilIdle(); // then b
        assertThat(a.receivedSize() + b.receivedSize()).isZero();
        // The guest's queue takes four data segments at a time; the guest's stack does not run in between,
        // so only the wake sends (no ACK comes back to do it).
        rig.guestRoom = Integer.MAX_VALUE;
        rig.guestQueueSlots = IpEndpoint.CONTROL_RESERVE + 4;
        List<byte[]> ring = new ArrayList<>();
        List<Integer> turns = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            rig.endpoint.roomAgain();
            while (!rig.toGuest.isEmpty()) {
                byte[] f = rig.toGuest.poll();
                turns.add(GuestFrames.parseTcp(f).dport());
                ring.add(f);
            }
        }
        assertThat(turns).containsExactly(40016, 40016, 40016, 40016, 40017, 40017, 40017, 40017,
                40016, 40016, 40016, 40016);
        // The guest's stack runs: what its ring holds, then the rest with the queue no longer in the way.
        rig.toGuest.addAll(ring);
        rig.guestQueueSlots = 0;
        rig.endpoint.roomAgain();
        untilIdle();
        assertThat(a.receivedSize()).isEqualTo(dataA.length);
        assertThat(b.receivedSize()).isEqualTo(dataB.length);
        assertThat(a.receivedBytes()).isEqualTo(dataA);
        assertThat(b.receivedBytes()).isEqualTo(dataB);
        assertThat(a.dupAcksSent + b.dupAcksSent).isZero();
        assertThat(idle.receivedSize()).isZero();
        assertThat(rig.net.get(NetCounter.RETRANSMITS)).isZero();
        // three turns of one connection each, then the two still waiting: the idle one was never woken
        assertThat(rig.net.get(NetCounter.ROOM_WAKES)).isEqualTo(5);
    }

    @Test
    void aStalledReaderClosesTheWindowAndReopensIt() {
        GuestTcp g = rig.connect(40008);
        rig.run(() -> g.established, 1000);
        rig.deliver();
        Echo app = apps.getFirst();
        app.reading = false;
        byte[] data = random(TcpConnection.BUFFER + 400_000, 8); // more than the window
        g.write(data);
        rig.run(() -> g.peerWindow == 0, 5000);
        // a few probes while closed
        for (int i = 0; i < 3; i++) {
            rig.ticker.advanceMillis(400);
            g.tick(rig.ticker.nanoTime());
            rig.deliver();
        }
        app.reading = true;
        app.pump();
        rig.endpoint.tick();
        rig.run(() -> g.receivedSize() == data.length, 60_000);
        assertThat(g.receivedBytes()).isEqualTo(data);
    }

    @Test
    void idleConnectionsAreDroppedAndResetDropsAll() {
        GuestTcp idle = rig.connect(40010);
        rig.run(() -> idle.established, 1000);
        rig.deliver();
        rig.ticker.advance(TcpConnection.IDLE_NANOS, java.util.concurrent.TimeUnit.NANOSECONDS);
        rig.endpoint.tick();
        assertThat(rig.endpoint.connectionCount()).isZero();
        assertThat(rig.net.get(NetCounter.IDLE_TIMEOUTS)).isEqualTo(1);
        rig.deliver();
        assertThat(idle.reset).isTrue();

        GuestTcp a = rig.connect(40011), b = rig.connect(40012);
        rig.run(() -> a.established && b.established, 1000);
        rig.endpoint.reset();
        assertThat(rig.endpoint.connectionCount()).isZero();
        assertThat(apps).allMatch(e -> e.closed);
    }

    // ---- hostile frames ----

    private byte[] validSyn() {
        return GuestFrames.tcp(43000, 9000, 5, 0, SYN, 65535, new byte[] {2, 4, 5, (byte) 180}, new byte[0]);
    }

    private void refused(byte[] frame, NetCounter counter) {
        long before = rig.net.get(counter);
        assertThat(rig.send(frame)).isTrue();
        assertThat(rig.net.get(counter)).as(counter.key()).isEqualTo(before + 1);
        assertThat(rig.endpoint.connectionCount()).isZero();
    }

    private static void fixIpChecksum(byte[] f) {
        f[24] = 0;
        f[25] = 0;
        int c = GuestFrames.checksum(f, 14, (f[14] & 0xf) * 4, 0);
        f[24] = (byte) (c >> 8);
        f[25] = (byte) c;
    }

    private static void fixTcpChecksum(byte[] f) {
        int len = f.length - 34;
        f[34 + 16] = 0;
        f[34 + 17] = 0;
        int c = GuestFrames.checksum(f, 34, len, GuestFrames.pseudo(GuestFrames.GUEST_IP, STORE_IP, 6, len));
        f[34 + 16] = (byte) (c >> 8);
        f[34 + 17] = (byte) c;
    }

    @Test
    void dropsAndCountsMalformedFrames() {
        byte[] f = validSyn();
        f[25] ^= 1;
        refused(f, NetCounter.DROP_IP_CHECKSUM);

        f = validSyn();
        f[34 + 16] ^= 1;
        refused(f, NetCounter.DROP_TCP_CHECKSUM);

        f = validSyn();
        ByteBuffer.wrap(f).putShort(16, (short) (f.length - 14 + 10)); // total length past the frame
        fixIpChecksum(f);
        refused(f, NetCounter.DROP_IP_HEADER);

        f = validSyn();
        f[14] = 0x44; // IHL 4
        refused(f, NetCounter.DROP_IP_HEADER);

        f = validSyn();
        f[14] = 0x65; // version 6 in an IPv4 frame
        fixIpChecksum(f);
        refused(f, NetCounter.DROP_IP_HEADER);

        f = validSyn();
        ByteBuffer.wrap(f).putShort(20, (short) 0x2000); // more fragments
        fixIpChecksum(f);
        refused(f, NetCounter.DROP_FRAGMENT);

        f = validSyn();
        ByteBuffer.wrap(f).putInt(26, 0xffffffff); // from the broadcast address
        fixIpChecksum(f);
        refused(f, NetCounter.DROP_ADDRESS);

        f = validSyn();
        f[14 + 9] = 17; // UDP
        fixIpChecksum(f);
        refused(f, NetCounter.DROP_PROTOCOL);

        refused(GuestFrames.tcp(43000, 9000, 5, 0, SYN | FIN, 65535, new byte[0], new byte[0]), NetCounter.DROP_TCP_FLAGS);
        refused(GuestFrames.tcp(43000, 9000, 5, 0, 0, 65535, new byte[0], new byte[0]), NetCounter.DROP_TCP_FLAGS);
        refused(GuestFrames.tcp(43000, 9000, 5, 0, SYN, 65535, new byte[] {2, 9, 5, (byte) 180}, new byte[0]),
                NetCounter.DROP_TCP_HEADER);
        refused(GuestFrames.tcp(43000, 9000, 5, 0, SYN, 65535, new byte[] {3, 2, 0, 0}, new byte[0]),
                NetCounter.DROP_TCP_HEADER);
        refused(GuestFrames.tcp(0, 9000, 5, 0, SYN, 65535, new byte[0], new byte[0]), NetCounter.DROP_ADDRESS);

        f = validSyn();
        f[34 + 12] = (byte) 0xf0; // data offset 60 > segment
        fixTcpChecksum(f);
        refused(f, NetCounter.DROP_TCP_HEADER);

        byte[] ping = GuestFrames.echoRequest(1, 1, new byte[8]);
        ping[36] ^= 1;
        refused(ping, NetCounter.DROP_ICMP);

        byte[] arp = GuestFrames.arpRequest(STORE_IP);
        arp[18] = 8; // hardware address length
        refused(arp, NetCounter.DROP_ARP);

        assertThat(rig.send(new byte[10])).isFalse();
        assertThat(rig.send(Arrays.copyOf(validSyn(), 30))).isFalse(); // too short to name the store
        rig.deliver();
        assertThat(rig.unclaimed).isEmpty(); // nothing answered a bad frame
    }

    @Test
    void anAckForNoConnectionGetsAReset() {
        refused(GuestFrames.tcp(43001, 9000, 5, 99, ACK, 65535, new byte[0], new byte[0]),
                NetCounter.DROP_TCP_NO_CONNECTION);
        rig.deliver();
        GuestFrames.Segment s = GuestFrames.parseTcp(rig.unclaimed.poll());
        assertThat(s.has(RST)).isTrue();
        assertThat(s.seq()).isEqualTo(99);
    }

    @Test
    void randomlyCorruptedFramesNeverThrow() {
        GuestTcp g = rig.connect(40009);
        rig.run(() -> g.established, 1000);
        Random r = new Random(7);
        List<byte[]> seeds = List.of(validSyn(), GuestFrames.echoRequest(1, 2, new byte[40]),
                GuestFrames.arpRequest(STORE_IP), g.raw(g.sndNxt, g.rcvNxt, ACK, new byte[100]),
                g.raw(g.sndNxt, g.rcvNxt, FIN | ACK, new byte[0]));
        for (int i = 0; i < 20_000; i++) {
            byte[] f = seeds.get(r.nextInt(seeds.size())).clone();
            int flips = 1 + r.nextInt(4);
            for (int k = 0; k < flips; k++) {
                f[14 + r.nextInt(f.length - 14)] = (byte) r.nextInt(256);
            }
            if (r.nextInt(4) == 0) {
                f = Arrays.copyOf(f, r.nextInt(f.length + 1));
            }
            rig.send(f);
            rig.toGuest.clear();
        }
        assertThat(rig.net.get(NetCounter.FRAMES)).isPositive();
    }
}
