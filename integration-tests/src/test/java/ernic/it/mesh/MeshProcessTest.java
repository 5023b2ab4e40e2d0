package ernic.it.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import ernic.it.harness.GuestFleet;
import ernic.it.harness.ServerProcess;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.AdminException;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Mr;
import ernic.model.rdma.Path;
import ernic.model.rdma.Qp;
import ernic.model.rdma.RdmaVerbs;
import ernic.model.rdma.SendWr;
import ernic.model.rdma.Wc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static ernic.model.rdma.RdmaVerbs.ACCESS_LOCAL_WRITE;
import static ernic.model.rdma.RdmaVerbs.ACCESS_REMOTE_ATOMIC;
import static ernic.model.rdma.RdmaVerbs.ACCESS_REMOTE_READ;
import static ernic.model.rdma.RdmaVerbs.ACCESS_REMOTE_WRITE;
import static ernic.model.rdma.RdmaVerbs.QP_REMOTE_ATOMIC;
import static ernic.model.rdma.RdmaVerbs.QP_REMOTE_READ;
import static ernic.model.rdma.RdmaVerbs.QP_REMOTE_WRITE;
import static ernic.model.rdma.RdmaVerbs.RC;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Real {@code ernic serve} processes joined in a mesh on loopback: a manager and workers over IPv4 and IPv6,
 * membership and GID ownership as each server's stats file reports them, RDMA WRITE/READ/SEND between two
 * servers' (driver-model) guests, the RTR refusal for a GID no node owns, a killed worker whose requests
 * complete with retry-exceeded while the others keep working, and the new id its restart gets.
 */
class MeshProcessTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    java.nio.file.Path tmp;

    static final int ALL = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    static final ObjectMapper JSON = new ObjectMapper();

    final List<ServerProcess> servers = new ArrayList<>();
    final List<IonicDriverModel> drivers = new ArrayList<>();
    java.nio.file.Path dir;

    @AfterEach
    void stop() {
        drivers.forEach(IonicDriverModel::close);
        servers.forEach(ServerProcess::close);
    }

    ServerProcess serve(String name, String backend, String gids) throws IOException {
        return serve(name, backend, Map.of("ERNIC_TCP_GUEST_GIDS", gids));
    }

    ServerProcess serve(String name, String backend, Map<String, String> env) throws IOException {
        java.nio.file.Path d = Files.createDirectories(dir.resolve(name));
        ServerProcess s = ServerProcess.start(d.resolve("ernic.sock"), List.of("--backend", backend, "--stats-file",
                d.resolve("stats.json").toString()), env, name + "| ", System.out);
        servers.add(s);
        return s;
    }

    JsonNode stats(String name) throws IOException {
        java.nio.file.Path f = dir.resolve(name).resolve("stats.json");
        return Files.exists(f) ? JSON.readTree(f.toFile()) : JSON.createObjectNode();
    }

    /** Waits (up to a minute: loaded CI machines) for {@code name}'s stats file to satisfy {@code cond}. */
    JsonNode await(String name, String what, Predicate<JsonNode> cond) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            JsonNode s;
            try {
                s = stats(name);
            } catch (IOException e) {
                s = JSON.createObjectNode(); // renamed over while being read
            }
            if (cond.test(s)) {
                return s;
            }
            assertThat(System.nanoTime()).as(name + ": " + what + "; last stats: " + s.path("mesh")).isLessThan(end);
            Thread.sleep(200);
        }
    }

    static Set<Integer> alive(JsonNode s) {
        Set<Integer> ids = new HashSet<>();
        for (JsonNode n : s.path("mesh").path("nodes")) {
            if (n.path("alive").asBoolean()) {
                ids.add(n.path("id").asInt());
            }
        }
        return ids;
    }

    static boolean owns(JsonNode s, String gid, int node) {
        JsonNode o = s.path("mesh").path("gids").path(gid);
        return o.isInt() && o.asInt() == node;
    }


    /** One server's guest as the driver model drives it: a CQ, an RC QP and a registered buffer. */
    final class Guest {
        final RdmaVerbs v;
        final Cq cq;
        final Qp qp;
        final Buffer buf;
        final Mr mr;
        final String ip;
        final Wc wc = new Wc();
        private final SendWr wr = new SendWr();

        Guest(ServerProcess s, String ip) throws IOException {
            IonicDriverModel drv = IonicDriverModel.connect(s.socket().toString());
            drivers.add(drv);
            v = RdmaVerbs.open(drv);
            cq = v.createCq(6);
            qp = v.createQp(RC, cq, cq, 5, 5, 8, QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC);
            buf = v.buffer(32 * 4096, true);
            mr = v.regMr(buf, 0, buf.length, ALL);
            this.ip = ip;
        }

        /** Connects this guest's QP and {@code peer}'s to each other: each through INIT, RTR and RTS. */
        void connect(Guest peer) throws IOException {
            toRts(peer);
            peer.toRts(this);
        }

        private void toRts(Guest peer) throws IOException {
            v.init(qp, QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC);
            v.rtr(qp, peer.qp.id, Path.of(ip, peer.ip));
            v.rts(qp);
        }

        Wc next() {
            assertThat(v.pollWait(cq, wc, 60_000)).as("a completion on " + ip).isTrue();
            return wc;
        }

        /**
         * Posts a WRITE or READ ({@code opcode}) of {@code length} bytes between this guest's buffer at {@code offset}
         * and {@code peer}'s at {@code peerOffset}; {@link #next} has its completion.
         */
        void postOneSided(int opcode, long offset, int length, Guest peer, long peerOffset) {
            wr.reset().sge(mr.va() + offset, length, mr.lkey());
            wr.opcode = opcode;
            wr.remoteVa = peer.mr.va() + peerOffset;
            wr.rkey = peer.mr.rkey();
            v.postSend(qp, wr);
        }

        /** WRITEs {@code data} (at {@code offset} in this guest's buffer) to {@code peer}'s at {@code peerOffset}: it lands. */
        void writes(byte[] data, long offset, Guest peer, long peerOffset) {
            postOneSided(RdmaVerbs.WRITE, offset, data.length, peer, peerOffset);
            assertThat(next().ok()).as("WRITE: " + wc).isTrue();
            assertThat(peer.buf.get(peerOffset, data.length)).isEqualTo(data);
        }

        /** READs {@code data.length} bytes of {@code peer}'s buffer at {@code peerOffset} to {@code offset}: they are {@code data}. */
        void reads(byte[] data, long offset, Guest peer, long peerOffset) {
            postOneSided(RdmaVerbs.READ, offset, data.length, peer, peerOffset);
            assertThat(next().ok()).as("READ: " + wc).isTrue();
            assertThat(buf.get(offset, data.length)).isEqualTo(data);
        }
    }

    static long rssKiB(ServerProcess s) throws IOException {
        for (String line : Files.readAllLines(java.nio.file.Path.of("/proc", Long.toString(s.process().pid()), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IOException("no VmRSS");
    }

    /**
     * A peer that stops reading: the manager's queue for it stops at the connection's watermark (its memory
     * stays bounded while the guest keeps posting), the send time-out shuts the connection, and the guest's
     * first WRITE completes with retry-exceeded, the rest flushed.
     */
    @Test
    void aPeerThatStopsReadingCostsBoundedMemoryAndIsCutOff() throws Exception {
        dir = Files.createTempDirectory(tmp, "ernic-mesh");
        int port = GuestFleet.freePort();
        ServerProcess manager = serve("m", "tcp:manager:listen:" + port,
                Map.of("ERNIC_TCP_GUEST_GIDS", "10.2.0.1", "ERNIC_TCP_SEND_TIMEOUT_MS", "4000"));
        io.netty.channel.EventLoopGroup loop = new io.netty.channel.MultiThreadIoEventLoopGroup(1,
                io.netty.channel.nio.NioIoHandler.newFactory());
        ernic.mesh.MeshNode stalled = ernic.mesh.MeshNode.worker(loop, "127.0.0.1", port,
                ernic.mesh.MeshConfig.defaults());
        try {
            stalled.advertiseGids(Set.of(ernic.mesh.Gid.parse("10.2.0.9")));
            stalled.start().syncUninterruptibly();
            await("m", "the stalled peer's GID", s -> owns(s, "10.2.0.9", 1));
            stalled.setReceivingFromAll(false);

            IonicDriverModel drv = IonicDriverModel.connect(manager.socket().toString());
            drivers.add(drv);
            RdmaVerbs v = RdmaVerbs.open(drv);
            Cq cq = v.createCq(8);
            Qp qp = v.createQp(RC, cq, cq, 7, 5, 8, QP_REMOTE_WRITE);
            v.init(qp, QP_REMOTE_WRITE);
            v.rtr(qp, 5, Path.of("10.2.0.1", "10.2.0.9"));
            v.rts(qp);
            Buffer buf = v.buffer(4 << 20, false);
            Mr mr = v.regMr(buf, 0, buf.length, ALL);
            long before = rssKiB(manager);
            SendWr wr = new SendWr();
            int posted = 100; // 400 MiB of WRITEs
            for (int i = 0; i < posted; i++) {
                wr.reset().sge(mr.va(), (int) buf.length, mr.lkey());
                wr.opcode = RdmaVerbs.WRITE;
                wr.remoteVa = 0x1000;
                wr.rkey = 0x101;
                v.postSend(qp, wr);
            }
            JsonNode queued = await("m", "the queue for the stalled peer at its watermark",
                    s -> s.path("mesh").path("peers").path("1").path("queueDepth").asLong() >= 28L << 20);
            long after = rssKiB(manager);
            long depth = queued.path("mesh").path("peers").path("1").path("queueDepth").asLong();
            System.out.printf("stalled peer: queue %d MiB, server RSS %d MiB -> %d MiB (+%d MiB) with %d MiB posted%n",
                    depth >> 20, before >> 10, after >> 10, (after - before) >> 10, (long) posted * 4);
            assertThat(depth).as("bytes queued for the peer").isLessThanOrEqualTo(40L << 20);
            assertThat(after - before).as("server memory growth, KiB").isLessThan(160L << 10);
            await("m", "the send time-out", s -> s.path("mesh").path("counters").path("node.sendTimeouts").asLong() > 0);
            stalled.close().syncUninterruptibly();
            // The first WRITE completes with retry-exceeded, which moves the QP to ERROR: the 99 behind it are
            // flushed (the device posts one flush completion; the driver reports each WQE as flushed).
            Wc wc = new Wc();
            for (int i = 0; i < posted; i++) {
                assertThat(v.pollWait(cq, wc, 60_000)).as("completion " + i).isTrue();
                assertThat(wc.status).as("completion " + i)
                        .isEqualTo(i == 0 ? RdmaVerbs.STS_RETRY_EXCEEDED : RdmaVerbs.STS_WQE_FLUSHED_ERR);
            }
        } finally {
            stalled.close().syncUninterruptibly();
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * A real manager process with 63 workers (mesh nodes in this JVM, direct connections off so every payload
     * between two workers is relayed by the manager process): a full 64-node table, relay, refusal of a 65th
     * node, and eviction of the dead node when it dies.
     */
    @Test
    void aRealManagerRelaysFillsItsTableAndEvicts() throws Exception {
        dir = Files.createTempDirectory(tmp, "ernic-mesh");
        int port = GuestFleet.freePort();
        serve("m", "tcp:manager:listen:" + port, "10.3.0.1");
        ernic.mesh.MeshConfig cfg = ernic.mesh.MeshConfig.defaults().withDirectPeers(id -> false);
        io.netty.channel.EventLoopGroup loops = new io.netty.channel.MultiThreadIoEventLoopGroup(4,
                io.netty.channel.nio.NioIoHandler.newFactory());
        List<ernic.mesh.MeshNode> workers = new ArrayList<>();
        try {
            for (int i = 1; i < ernic.mesh.MeshConfig.MAX_NODES; i++) {
                ernic.mesh.MeshNode w = ernic.mesh.MeshNode.worker(loops, "127.0.0.1", port, cfg);
                w.start();
                workers.add(w);
            }
            await("m", "64 nodes alive", s -> alive(s).size() == 64);
            // The manager counts a node alive when it registers it; the worker learns its id from the reply.
            await("m", "every worker's id", s -> workers.stream().allMatch(w -> w.nodeId() > 0));
            Map<Integer, ernic.mesh.MeshNode> byId = new java.util.HashMap<>();
            workers.forEach(w -> byId.put(w.nodeId(), w));
            assertThat(byId.keySet()).hasSize(63).allMatch(id -> id >= 1 && id <= 63);

            // Relay: worker 5 to worker 60, with no direct connection between them.
            ernic.mesh.MeshNode from = byId.get(5), to = byId.get(60);
            java.util.concurrent.LinkedBlockingQueue<String> got = new java.util.concurrent.LinkedBlockingQueue<>();
            to.addListener(new ernic.mesh.MeshListener() {
                @Override
                public void onMessage(int src, io.netty.buffer.ByteBuf p) {
                    got.add(src + ":" + p.toString(java.nio.charset.StandardCharsets.UTF_8));
                    p.release();
                }
            });
            await("m", "worker 5 knows worker 60", s -> from.hasRoute(60));
            for (int i = 0; i < 10; i++) {
                String text = "relayed " + i;
                from.eventLoop().submit(() -> from.send(60, io.netty.buffer.Unpooled.copiedBuffer(text,
                        java.nio.charset.StandardCharsets.UTF_8))).syncUninterruptibly();
            }
            for (int i = 0; i < 10; i++) {
                assertThat(got.poll(30, TimeUnit.SECONDS)).isEqualTo("5:relayed " + i);
            }
            assertThat(from.peerCounters().get(60)).containsEntry("relayedMessages", 10L);

            // A 65th node is refused while every node is alive ...
            ernic.mesh.MeshNode extra = ernic.mesh.MeshNode.worker(loops, "127.0.0.1", port, cfg);
            extra.start();
            workers.add(extra);
            await("m", "the 65th refused", s -> s.path("mesh").path("counters").path("node.registrationsRefused")
                    .asLong() >= 1);
            assertThat(extra.nodeId()).isEqualTo(-1);
            // ... and takes the slot of a node that dies, under a new id.
            byId.get(10).close().syncUninterruptibly();
            JsonNode after = await("m", "node 64 in, node 10 evicted", s -> alive(s).contains(64)
                    && s.path("mesh").path("counters").path("node.evictions").asLong() == 1);
            assertThat(extra.nodeId()).isEqualTo(64);
            assertThat(after.path("mesh").path("nodes")).hasSize(64);
            assertThat(alive(after)).doesNotContain(10);
        } finally {
            workers.forEach(w -> w.close().awaitUninterruptibly(5, TimeUnit.SECONDS));
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    static byte[] pattern(int n, int seed) {
        byte[] p = new byte[n];
        for (int i = 0; i < n; i++) {
            p[i] = (byte) (i * 13 + seed + (i >>> 9));
        }
        return p;
    }

    /** A secret file as an operator makes one: random hex, a newline, mode 0600. */
    java.nio.file.Path secretFile(String name) throws IOException {
        byte[] random = new byte[32];
        new java.security.SecureRandom().nextBytes(random);
        java.nio.file.Path f = Files.writeString(dir.resolve(name), java.util.HexFormat.of().formatHex(random) + "\n");
        Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        return f;
    }

    static long meshCounter(JsonNode s, String key) {
        return s.path("mesh").path("counters").path("node." + key).asLong();
    }

    /**
     * Two servers given the same secret file authenticate each other and their guests talk RDMA; a server with
     * another secret, and one with none, are refused at the manager (each end counts why) and never join.
     */
    @Test
    void serversSharingASecretFormAMeshThatOthersCannotJoin() throws Exception {
        dir = Files.createTempDirectory(tmp, "ernic-mesh");
        int port = GuestFleet.freePort();
        java.nio.file.Path secret = secretFile("mesh.key");
        ServerProcess manager = serve("m", "tcp:manager:listen:" + port + ",secret=" + secret, "10.4.0.1");
        ServerProcess w1 = serve("w1", "tcp:worker:127.0.0.1:" + port + ",secret=" + secret, "10.4.0.2");
        await("m", "two nodes alive", s -> alive(s).equals(Set.of(0, 1)));
        await("w1", "the GID table", s -> owns(s, "10.4.0.1", 0) && owns(s, "10.4.0.2", 1));

        Guest g0 = new Guest(manager, "10.4.0.1"), g1 = new Guest(w1, "10.4.0.2");
        g0.connect(g1);
        byte[] data = pattern(20_000, 5);
        g0.buf.put(0, data);
        g0.writes(data, 0, g1, 4096);
        g1.reads(data, 65_536, g0, 0);

        serve("w2", "tcp:worker:127.0.0.1:" + port + ",secret=" + secretFile("other.key"), "10.4.0.3");
        serve("w3", "tcp:worker:127.0.0.1:" + port, "10.4.0.4");
        await("m", "another secret and none refused", s -> meshCounter(s, "authWrongProof") >= 1
                && meshCounter(s, "authMissing") >= 1);
        await("w2", "the manager's proof refused", s -> meshCounter(s, "authWrongProof") >= 1);
        await("w3", "the manager's challenge refused", s -> meshCounter(s, "authUnexpected") >= 1);
        JsonNode m = stats("m");
        assertThat(alive(m)).isEqualTo(Set.of(0, 1));
        assertThat(m.path("mesh").path("nodes")).as("never registered").hasSize(2);
        assertThat(meshCounter(m, "authPassed")).isPositive();
        assertThat(meshCounter(m, "protocolErrors")).isZero();
        assertThat(stats("w2").path("mesh").path("node_id").asInt()).isEqualTo(-1);
        assertThat(stats("w3").path("mesh").path("node_id").asInt()).isEqualTo(-1);
    }

    @Test
    void serversFormAMeshAndTheirGuestsTalkRdmaThroughIt() throws Exception {
        dir = Files.createTempDirectory(tmp, "ernic-mesh");
        int port = GuestFleet.freePort();
        ServerProcess manager = serve("m", "tcp:manager:listen:" + port, "10.1.0.1");
        ServerProcess w1 = serve("w1", "tcp:worker:127.0.0.1:" + port, "10.1.0.2");
        serve("w2", "tcp:worker:[::1]:" + port, "10.1.0.3");

        // Membership: ids in arrival order, every node alive, every GID's owner known everywhere.
        await("m", "three nodes alive", s -> alive(s).equals(Set.of(0, 1, 2)));
        for (String n : new String[]{"m", "w1", "w2"}) {
            await(n, "the GID table", s -> owns(s, "10.1.0.1", 0) && owns(s, "10.1.0.2", 1)
                    && owns(s, "10.1.0.3", 2));
        }
        assertThat(stats("w1").path("mesh").path("node_id").asInt()).isEqualTo(1);
        assertThat(stats("w2").path("mesh").path("node_id").asInt()).isEqualTo(2);
        assertThat(stats("m").path("mesh").path("role").asText()).isEqualTo("manager");

        Guest g0 = new Guest(manager, "10.1.0.1"), g1 = new Guest(w1, "10.1.0.2");
        g0.connect(g1);
        SendWr wr = new SendWr();

        // WRITE 40 KiB from guest 0 into guest 1's scattered buffer, then READ it back elsewhere.
        byte[] data = pattern(40_000, 3);
        g0.buf.put(100, data);
        g0.writes(data, 100, g1, 5000);
        g0.reads(data, 45_000, g1, 5000);

        // SEND from guest 1 into a receive guest 0 posted.
        byte[] msg = pattern(3000, 9);
        g1.buf.put(0, msg);
        g0.v.postRecv(g0.qp, 5, g0.mr.va() + 20_000, 4096, g0.mr.lkey());
        wr.reset().sge(g1.mr.va(), msg.length, g1.mr.lkey());
        g1.v.postSend(g1.qp, wr);
        assertThat(g1.next().ok()).as("SEND: " + g1.wc).isTrue();
        Wc recv = g0.next();
        assertThat(recv.ok()).isTrue();
        assertThat(recv.byteLen).isEqualTo(msg.length);
        assertThat(g0.buf.get(20_000, msg.length)).isEqualTo(msg);

        // A destination GID no node owns: RTR refused (writes must never land in the wrong VM).
        Qp stray = g0.v.createQp(RC, g0.cq, g0.cq, 5, 5, 8, QP_REMOTE_WRITE);
        g0.v.init(stray, QP_REMOTE_WRITE);
        assertThatThrownBy(() -> g0.v.rtr(stray, 9, Path.of("10.1.0.1", "10.1.0.99")))
                .isInstanceOf(AdminException.class)
                .satisfies(e -> assertThat(((AdminException) e).status).isEqualTo(RdmaVerbs.ASTS_BAD_ATTR));

        // Kill worker 1: guest 0's next WRITE to it completes with retry-exceeded; worker 2 stays in the mesh.
        w1.kill();
        long killed = System.nanoTime();
        g0.postOneSided(RdmaVerbs.WRITE, 0, 4096, g1, 0);
        Wc lost = g0.next();
        System.out.printf("WRITE to a killed worker completed with status %d after %d ms%n", lost.status,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed));
        assertThat(lost.status).isEqualTo(RdmaVerbs.STS_RETRY_EXCEEDED);
        await("m", "worker 1 dead, worker 2 alive", s -> alive(s).equals(Set.of(0, 2)));

        // The others keep working: guest 0 and a guest of worker 2 talk.
        Guest g2 = new Guest(servers.get(2), "10.1.0.3");
        Qp q0 = g0.v.createQp(RC, g0.cq, g0.cq, 5, 5, 8, QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC);
        g0.v.init(q0, QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC);
        g0.v.rtr(q0, g2.qp.id, Path.of("10.1.0.1", "10.1.0.3"));
        g0.v.rts(q0);
        g2.v.init(g2.qp, QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC);
        g2.v.rtr(g2.qp, q0.id, Path.of("10.1.0.3", "10.1.0.1"));
        g2.v.rts(g2.qp);
        g2.buf.putLong(64, 40);
        wr.reset().sge(g0.mr.va() + 128, 8, g0.mr.lkey());
        wr.opcode = RdmaVerbs.ATOMIC_FA;
        wr.remoteVa = g2.mr.va() + 64;
        wr.rkey = g2.mr.rkey();
        wr.swapAdd = 2;
        g0.v.postSend(q0, wr);
        assertThat(g0.next().ok()).as("ATOMIC to worker 2: " + g0.wc).isTrue();
        assertThat(g2.buf.getLong(64)).isEqualTo(42);
        assertThat(g0.buf.getLong(128)).isEqualTo(40);

        // A restarted worker is a new instance: it gets a new id, never 1 again.
        servers.remove(w1);
        serve("w1", "tcp:worker:127.0.0.1:" + port, "10.1.0.2");
        await("m", "the restarted worker as node 3", s -> alive(s).equals(Set.of(0, 2, 3)));
        await("w2", "its GIDs moved to node 3", s -> owns(s, "10.1.0.2", 3));
        JsonNode peers = stats("m").path("mesh").path("peers");
        assertThat(peers.path("1").path("bytesReceived").asLong()).as("bytes from worker 1: " + peers).isPositive();
        assertThat(stats("m").path("device").path("rdma.remote.requestsSent").asLong()).isPositive();
    }
}
