package ernic.it.guest;

import ernic.ionic.IonicDevice;
import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.it.harness.NetNamespace;
import ernic.server.ErnicServer;
import ernic.server.P4Options;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The P4 engine on the device's paths, with two guests whose servers' TAPs share a bridge (the programs are
 * in test resources p4/, written by make_programs.py; docs/p4.md):
 * <ul>
 *   <li>guest A's server runs l2_fwd: by destination MAC it forwards (ping and iperf3 reach guest B),
 *   rewrites (a virtual MAC becomes guest B's, so a ping addressed to it is answered) and drops (an unknown
 *   MAC gets nothing through), as its entries say;</li>
 *   <li>guest B's server runs rdma_fp8 on every send WQE: an RDMA WRITE into a region its entries deny, and
 *   one to an rkey the guest chose (its entry added at run time, once the guest knows the key) complete
 *   with a local protection error and move nothing; a WRITE of E4M3 vectors into the accumulate region
 *   adds to what is there (saturating), one of fp32 values into the conversion region lands as E4M3.</li>
 * </ul>
 * The expected fp8 bytes are worked from the OCP FP8 spec: E4M3 1.0 = 0x38, 2.0 = 0x40, 3.0 = 0x44, the
 * largest finite 448 = 0x7e, -2.0 = 0xc0, 0.3 rounds to 0.3125 = 0x2a.
 */
@ExtendWith(GuestPrerequisites.class)
class P4GuestTest {
    static final String MAC_A = "02:00:00:ee:00:0a", MAC_B = "02:00:00:ee:00:0b";
    static final String IP_A = "192.168.77.1", IP_B = "192.168.77.2";

    static String up(String ip) {
        return GuestScripts.rdmaUp(ip) + "echo \"mac $(cat /sys/class/net/$nd/address)\"\n";
    }

    /** Guest A: forward, rewrite and drop, seen by ping and iperf3. */
    static final String GUEST_A = up(IP_A) + """
            # Guest B may boot minutes later under TCG (a stalled first boot is retried): wait for the test
            # to say B is listening before counting pings.
            for i in $(seq 1 1200); do [ -e /job/b-up ] && break; sleep 0.5; done
            ok=0
            for i in $(seq 1 60); do ping -c 1 -W 2 %1$s > /dev/null && { ok=1; break; }; sleep 1; done
            echo "reached $ok"
            echo "forward: $(ping -c 3 -W 2 %1$s | grep transmitted)"
            for i in $(seq 1 10); do iperf3 -c %1$s -t 3 -J > /tmp/iperf.json 2>&1 && break; sleep 1; done
            python3 -c 'import json; j = json.load(open("/tmp/iperf.json")); print("iperf3 received bytes", j["end"]["sum_received"]["bytes"])'
            ip neigh replace %1$s lladdr 02:00:00:ee:00:0f dev "$nd" nud permanent
            echo "rewrite: $(ping -c 3 -W 2 %1$s | grep transmitted)"
            ip neigh replace %1$s lladdr 02:00:00:ee:00:0c dev "$nd" nud permanent
            echo "drop: $(ping -c 3 -W 1 %1$s | grep transmitted)"
            touch /job/a-done
            """.formatted(IP_B);

    /** Guest B's RDMA program (pyverbs): WRITEs between two of its own RC QPs into the program's regions. */
    static final String RDMA_PY = GuestScripts.PYVERBS_RC + """
            import ctypes, os, struct, time
            from pyverbs.device import Context
            from pyverbs.pd import PD
            from pyverbs.cq import CQ
            from pyverbs.mr import MR
            from pyverbs.wr import SGE, SendWR
            MiB = 1 << 20
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mmap.restype = ctypes.c_void_p
            libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
            ctx = Context(name='ionic_0')
            route = ipv4_route(ctx)
            pd = PD(ctx)
            cq = CQ(ctx, 64)

            def region(addr):
                # The program's entries name regions by address: map one there (MAP_FIXED_NOREPLACE).
                p = libc.mmap(addr, MiB, 3, 0x22 | 0x100000, -1, 0)
                assert p == addr, 'mmap at %x gave %x' % (addr, p or 0)
                return MR(pd, MiB, ACC, address=addr)

            def pair():
                a, b = rc_qp(pd, cq), rc_qp(pd, cq)
                connect(a, b.qp_num, route)
                connect(b, a.qp_num, route)
                return a, b

            src = MR(pd, MiB, ACC)
            sender, receiver = pair()  # both kept: a QP object that is dropped is destroyed

            def write(data, mr, offset=0):
                # An RDMA WRITE of data into mr at offset; the completion's status. An error moves the QP to
                # ERROR, so the next WRITE goes on a new pair.
                global sender, receiver
                src.write(data, len(data))
                wr = SendWR(wr_id=1, opcode=e.ibv_wr_opcode.IBV_WR_RDMA_WRITE, num_sge=1,
                            sg=[SGE(src.buf, len(data), src.lkey)])
                wr.set_wr_rdma(mr.rkey, mr.buf + offset)
                sender.post_send(wr)
                for _ in range(20000):
                    n, wcs = cq.poll()
                    if n:
                        break
                    time.sleep(0.001)
                status = wcs[0].status if n else -1
                if status != 0:
                    sender, receiver = pair()
                return status

            LOC_PROT_ERR = e.ibv_wc_status.IBV_WC_LOC_PROT_ERR
            print('loc-prot-err is', int(LOC_PROT_ERR))

            plain = MR(pd, MiB, ACC)
            data = os.urandom(4096)
            print('plain write', write(data, plain), plain.read(4096, 0) == data)

            denied = region(0x6e0000000000)
            print('denied region write', write(data, denied), denied.read(4096, 0) == bytes(4096))

            chosen = MR(pd, MiB, ACC)
            with open('/job/rkey.tmp', 'w') as f:
                f.write('%d\\n' % chosen.rkey)
            os.rename('/job/rkey.tmp', '/job/rkey')  # whole, or not there yet: the test reads it
            for _ in range(600):
                if os.path.exists('/job/rkey-armed'):
                    break
                time.sleep(0.1)
            print('chosen rkey write', write(data, chosen), chosen.read(4096, 0) == bytes(4096))
            print('other rkey write', write(data, plain, 8192), plain.read(4096, 8192) == data)

            acc = region(0x6f0000000000)
            acc.write(bytes([0x38]) * 64 + bytes([0x7e]) * 64, 128)
            print('accumulate 1', write(bytes([0x38]) * 64, acc), acc.read(64, 0).hex())
            print('accumulate 2', write(bytes([0x38]) * 64, acc), acc.read(64, 0).hex())
            print('accumulate saturates', write(bytes([0x7e]) * 64, acc, 64), acc.read(64, 64).hex())

            conv = region(0x6d0000000000)
            conv.write(bytes([0xaa]) * 16, 16)
            print('convert', write(struct.pack('<4f', 1.0, -2.0, 1000.0, 0.3), conv), conv.read(16, 0).hex())
            print('rdma-p4-done')
            """;

    /** Guest B: an iperf3 server for guest A, its own RDMA checks, then up until guest A is done. */
    static final String GUEST_B = up(IP_B) + """
            iperf3 -s -D
            touch /job/b-up
            cat > /tmp/p4rdma.py <<'EOF'
            %sEOF
            python3 /tmp/p4rdma.py
            for i in $(seq 1 600); do [ -e /job/a-done ] && break; sleep 0.5; done
            echo "b-done"
            """.formatted(RDMA_PY);


    static Path resource(String name) throws URISyntaxException {
        return Path.of(P4GuestTest.class.getResource("/p4/" + name).toURI());
    }

    @Test
    void programsForwardRewriteDropFramesAndDropOrTransformWrites() throws Exception {
        long pid = ProcessHandle.current().pid();
        Path work = Files.createDirectories(Path.of("target", "guest", "p4")).toAbsolutePath();
        Path jobA = work.resolve("vm0"), jobB = work.resolve("vm1");
        for (Path f : new Path[] {jobA.resolve("a-done"), jobB.resolve("a-done"), jobB.resolve("rkey"),
                jobB.resolve("rkey.tmp"), jobB.resolve("rkey-armed"), jobA.resolve("b-up"), jobB.resolve("b-up")}) {
            Files.deleteIfExists(f);
        }
        // Server B's entries: the file's (accumulate, convert) and a deny of WRITEs into 0x6e0000000000.
        Path entriesB = work.resolve("rdma_fp8-test.entries");
        Files.writeString(entriesB, Files.readString(resource("rdma_fp8.entries"))
                + "table_add wqe_extern deny 1 4&&&0xff 0&&&0 0x6e0000000000&&&0xfffffffffff00000 => 3\n");
        String tapA = "erpa" + pid % 100000, tapB = "erpb" + pid % 100000;
        ErnicServer.Settings a = ErnicServer.Settings.ionic(Files.createDirectories(work.resolve("sa")).resolve("s.sock")
                        .toString()).withTap(tapA).withMac(MAC_A)
                .withP4(P4Options.of(false, resource("l2_fwd.json").toString(), resource("l2_fwd.entries").toString(), null));
        ErnicServer.Settings b = ErnicServer.Settings.ionic(Files.createDirectories(work.resolve("sb")).resolve("s.sock")
                        .toString()).withTap(tapB).withMac(MAC_B)
                .withP4(P4Options.of(false, resource("rdma_fp8.json").toString(), entriesB.toString(), null));
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (ErnicServer serverA = ErnicServer.start(a);
             ErnicServer serverB = ErnicServer.start(b);
             NetNamespace ns = NetNamespace.create("ernic-ptest-" + pid)) {
            ns.exec("ip", "link", "add", "br0", "type", "bridge");
            ns.exec("ip", "link", "set", "br0", "up");
            for (String tap : new String[] {tapA, tapB}) {
                ns.adopt(tap);
                ns.exec("ip", "link", "set", tap, "master", "br0", "up");
            }
            CompletableFuture<GuestResult> runA = run(threads, jobA, 0, serverA, GUEST_A);
            CompletableFuture<GuestResult> runB = run(threads, jobB, 1, serverB, GUEST_B);
            // Guest B up: guest A may start pinging it. The chosen rkey: once guest B has it, a deny entry
            // for it goes in at run time.
            while (!runB.isDone() && !Files.exists(jobB.resolve("rkey"))) {
                if (Files.exists(jobB.resolve("b-up")) && !Files.exists(jobA.resolve("b-up"))) {
                    Files.writeString(jobA.resolve("b-up"), "");
                }
                Thread.sleep(200);
            }
            if (!Files.exists(jobA.resolve("b-up"))) {
                Files.writeString(jobA.resolve("b-up"), ""); // B ended or has its rkey: A's checks show which
            }
            if (Files.exists(jobB.resolve("rkey"))) {
                long rkey = Long.parseLong(Files.readString(jobB.resolve("rkey")).trim());
                IonicDevice dev = (IonicDevice) serverB.device();
                serverB.vfioUser().eventLoop().submit(() -> dev.p4().engine().applyEntries(
                        "table_add wqe_extern deny 1 4&&&0xff 0x%x&&&0xffffffff 0&&&0 => 2".formatted(rkey),
                        "P4GuestTest")).get();
                Files.writeString(jobB.resolve("rkey-armed"), "");
            }
            GuestResult ra = runA.get();
            Files.writeString(jobB.resolve("a-done"), "");
            GuestResult rb = runB.get();
            Map<String, Long> countersA = ((IonicDevice) serverA.device()).lastSessionCounters();
            Map<String, Long> countersB = ((IonicDevice) serverB.device()).lastSessionCounters();
            System.out.println(ra + "\n" + rb);
            System.out.println("server A p4: " + p4(countersA) + "\nserver B p4: " + p4(countersB));

            assertThat(ra.exitStatus()).as("guest A; console tail:\n%s\noutput:\n%s", ra.consoleTail(40), ra.output())
                    .isZero();
            assertThat(rb.exitStatus()).as("guest B; console tail:\n%s\noutput:\n%s", rb.consoleTail(40), rb.output())
                    .isZero();
            assertThat(ra.output()).contains("mac " + MAC_A).contains("reached 1")
                    .contains("forward: 3 packets transmitted, 3 received")
                    .containsPattern("iperf3 received bytes [1-9]\\d{5,}")
                    .contains("rewrite: 3 packets transmitted, 3 received")
                    .contains("drop: 3 packets transmitted, 0 received");
            String out = rb.output();
            assertThat(out).contains("mac " + MAC_B).contains("loc-prot-err is 4")
                    .contains("plain write 0 True")
                    .contains("denied region write 4 True")
                    .contains("chosen rkey write 4 True")
                    .contains("other rkey write 0 True")
                    .contains("accumulate 1 0 " + "40".repeat(64))
                    .contains("accumulate 2 0 " + "44".repeat(64))
                    .contains("accumulate saturates 0 " + "7e".repeat(64))
                    .contains("convert 0 38c07e2a" + "aa".repeat(12))
                    .contains("rdma-p4-done").contains("b-done");
            assertThat(countersA.get("p4.eth.tx_dropped")).as("guest A's frames to the unknown MAC").isGreaterThanOrEqualTo(3);
            assertThat(countersB.get("p4.wqe.dropped")).isEqualTo(2);
            assertThat(countersB.get("p4.wqe.fp8_accumulate.ops")).isEqualTo(3);
            assertThat(countersB.get("p4.wqe.format_convert.ops")).isEqualTo(1);
        } finally {
            threads.shutdownNow();
        }
    }

    private static CompletableFuture<GuestResult> run(ExecutorService threads, Path job, int index, ErnicServer server,
                                                      String script) {
        Path socket = Path.of(server.vfioUser().socketPath());
        return CompletableFuture.supplyAsync(() -> {
            try {
                return new GuestVm(index, job, socket, System.out).run(script);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, threads);
    }

    private static Map<String, Long> p4(Map<String, Long> counters) {
        Map<String, Long> m = new TreeMap<>();
        counters.forEach((k, v) -> {
            if (k.startsWith("p4.")) {
                m.put(k, v);
            }
        });
        return m;
    }
}
