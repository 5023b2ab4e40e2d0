package ernic.it.guest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hostile guest across the mesh ({@code ./ernic guest run --vms 2}, one boot of both guests): a pyverbs process
 * in guest 1 connects RC QPs to guest 0 (QP numbers and GIDs over a small TCP exchange on the guests' Ethernet
 * segment, as the tools do) and aims wrong rkeys, addresses outside the MR, lengths beyond it, operations an MR or
 * QP does not allow, and floods at guest 0's memory. Each bad operation completes at the attacker with the
 * hardware's status and flushes what it posted behind it, as RC does; guest 0's memory outside what it allowed is
 * untouched (canaries); guest 0's own traffic, ping-pongs between two of its processes and one with a
 * well-behaved process of guest 1, completes throughout.
 */
@ExtendWith(GuestPrerequisites.class)
class MeshHostileGuestTest {
    /** What both sides start with: verbs objects, statuses by name, an RC QP taken to RTS toward a peer. */
    static final String COMMON_PY = GuestScripts.PYVERBS_RC + """
            import os, socket, sys, time
            from pyverbs.device import Context
            from pyverbs.pd import PD
            from pyverbs.cq import CQ
            from pyverbs.mr import MR
            from pyverbs.qp import QP, QPCap, QPInitAttr, QPAttr
            from pyverbs.wr import SGE, SendWR, RecvWR
            from pyverbs.addr import AHAttr, GlobalRoute, GID
            import pyverbs.libibverbs_enums as e

            A = e.ibv_access_flags
            ALL = (A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_WRITE | A.IBV_ACCESS_REMOTE_READ
                   | A.IBV_ACCESS_REMOTE_ATOMIC)
            W = e.ibv_wr_opcode
            SIG = e.ibv_send_flags.IBV_SEND_SIGNALED
            GIDX = 1  # the IPv4-mapped GID of the guest's segment address
            PORT = 18800
            ctx = Context(name='ionic_0')
            pd = PD(ctx)
            mygid = str(ctx.query_gid(1, GIDX))

            def rc_qp(cq, depth, recvs=1):
                cap = QPCap(max_send_wr=depth, max_recv_wr=recvs, max_send_sge=1, max_recv_sge=1)
                return QP(pd, QPInitAttr(qp_type=e.ibv_qp_type.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))

            def to_rts(q, access, dest_qpn, dgid):
                connect(q, dest_qpn, GlobalRoute(dgid=GID(dgid), sgid_index=GIDX), access)
            """;

    /**
     * Guest 0: exposes four MRs (open: all remote rights; read-only; a canary with local rights only; a sink for
     * the floods), fills them with known bytes, makes one fresh QP per case as the attacker asks (an error moves
     * both RC ends to ERROR), and at the end checks what landed where.
     */
    static final String VICTIM_PY = COMMON_PY + """
            opened = MR(pd, 8192, ALL)
            ro = MR(pd, 4096, A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_READ)
            canary = MR(pd, 8192, A.IBV_ACCESS_LOCAL_WRITE)
            sink = MR(pd, 32768, ALL)
            recvbuf = MR(pd, 128 * 1024, A.IBV_ACCESS_LOCAL_WRITE)
            opened.write(b'V' * 8192, 8192, 0)
            ro.write(b'R' * 4096, 4096, 0)
            canary.write(b'\\xc3' * 8192, 8192, 0)
            sink.write(b'\\0' * 32768, 32768, 0)
            RIGHTS = {'all': ALL,
                      'no-remote-write': A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_READ
                      | A.IBV_ACCESS_REMOTE_ATOMIC,
                      'no-remote-read': A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_WRITE
                      | A.IBV_ACCESS_REMOTE_ATOMIC}
            srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(('0.0.0.0', PORT))
            srv.listen(1)
            print('VICTIM listening', flush=True)
            conn, peer = srv.accept()
            f = conn.makefile('rw')
            open('/tmp/attack-started', 'w').close()
            print('VICTIM attacker connected from %s' % peer[0], flush=True)
            keep, recv_cqs = [], []
            attacker_gid = None
            while True:
                line = f.readline()
                if not line:
                    break
                w = line.split()
                if not w:
                    continue
                if w[0] == 'HELLO':
                    attacker_gid = w[1]
                    f.write('MRS %s %d %d %d %d %d %d %d %d\\n' % (mygid, opened.buf, opened.rkey, ro.buf, ro.rkey,
                            canary.buf, canary.rkey, sink.buf, sink.rkey))
                elif w[0] == 'QP':
                    recvs = int(w[3])
                    cq = CQ(ctx, 256)
                    q = rc_qp(cq, 16, 128)
                    to_rts(q, RIGHTS[w[2]], int(w[1]), attacker_gid)
                    for i in range(recvs):  # (libionic takes receives from INIT on, not in RESET)
                        q.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(recvbuf.buf + i * 1024, 1024, recvbuf.lkey)]))
                    keep.append((cq, q))
                    if recvs:
                        recv_cqs.append(cq)
                    f.write('QP %d\\n' % q.qp_num)
                elif w[0] == 'DONE':
                    break
                f.flush()
            # The receives the SEND flood consumed: every one a success, no more than were posted.
            got = {}
            for cq in recv_cqs:
                for _ in range(50):
                    n, wcs = cq.poll(num_entries=32)
                    if n <= 0:
                        break
                    for wc in wcs[:n]:
                        got[status(wc.status)] = got.get(status(wc.status), 0) + 1
            print('VICTIM receives %s' % ' '.join('%s=%d' % kv for kv in sorted(got.items())), flush=True)
            print('VICTIM open-mr untouched=%s' % (opened.read(8192, 0) == b'V' * 8192), flush=True)
            print('VICTIM read-only-mr untouched=%s' % (ro.read(4096, 0) == b'R' * 4096), flush=True)
            print('VICTIM canary untouched=%s' % (canary.read(8192, 0) == b'\\xc3' * 8192), flush=True)
            print('VICTIM sink flooded=%s' % (sink.read(32768, 0) == b'F' * 32768), flush=True)
            f.write('BYE\\n')
            f.flush()
            open('/tmp/attack-done', 'w').close()
            print('VICTIM done', flush=True)
            """;

    /**
     * Guest 1: one fresh QP pair per case; the bad work request is followed by two good WRITEs into the sink, which
     * RC flushes once the first fails. The floods keep the SQ full for as long as there is work.
     */
    static final String ATTACKER_PY = COMMON_PY + """
            local = MR(pd, 65536, ALL)
            local.write(b'F' * 65536, 65536, 0)
            host = sys.argv[1]
            for i in range(600):
                try:
                    s = socket.create_connection((host, PORT))
                    break
                except OSError:
                    time.sleep(0.5)
            f = s.makefile('rw')

            def ask(*words):
                f.write(' '.join(str(x) for x in words) + '\\n')
                f.flush()
                return f.readline().split()

            r = ask('HELLO', mygid)
            vgid = r[1]
            OPEN, OPEN_KEY, RO, RO_KEY, CANARY, CANARY_KEY, SINK, SINK_KEY = (int(x) for x in r[2:10])
            BAD_KEY = OPEN_KEY ^ 0x00fff000  # an index no MR of the victim has
            TOP = (1 << 64) - 16

            def connected(depth, rights='all', recvs=0):
                cq = CQ(ctx, 512)
                q = rc_qp(cq, depth)
                to_rts(q, ALL, int(ask('QP', q.qp_num, rights, recvs)[1]), vgid)
                return cq, q

            def wait(cq, want, stall=60.0):
                got, last = [], time.time()
                while len(got) < want and time.time() - last < stall:
                    n, wcs = cq.poll(num_entries=32)
                    if n > 0:
                        got += wcs[:n]
                        last = time.time()
                    else:
                        time.sleep(0.0005)
                return got

            def wr(wr_id, op, length, key, addr, at=0, nxt=None):
                w = SendWR(wr_id=wr_id, opcode=op, num_sge=1, sg=[SGE(local.buf + at, length, local.lkey)],
                           send_flags=SIG, next_wr=nxt)
                if op in (W.IBV_WR_ATOMIC_FETCH_AND_ADD, W.IBV_WR_ATOMIC_CMP_AND_SWP):
                    w.set_wr_atomic(key, addr, 1, 0)
                elif op != W.IBV_WR_SEND:
                    w.set_wr_rdma(key, addr)
                return w

            RW = W.IBV_WR_RDMA_WRITE

            def case(name, op, length, key, addr, rights='all'):
                cq, q = connected(16, rights)
                # One post (one doorbell) of the three: the device sees the good ones behind the bad one before its
                # error comes back, so RC's flush of them does not race the consumer's posts.
                # (Each SendWR of the chain held in a name: the chain is C pointers, which keep no Python object alive.)
                third = wr(3, RW, 64, SINK_KEY, SINK + 192)
                second = wr(2, RW, 64, SINK_KEY, SINK + 128, 0, third)
                bad = wr(1, op, length, key, addr, 8192 if length == 8 else 0, second)
                q.post_send(bad)
                wcs = sorted(wait(cq, 3), key=lambda w: w.wr_id)
                sts = [status(w.status) for w in wcs]
                print('ATTACK case=%s status=%s then=%s' % (name, sts[0] if sts else 'NO_COMPLETION',
                      ','.join(sts[1:])), flush=True)

            FA, CS = W.IBV_WR_ATOMIC_FETCH_AND_ADD, W.IBV_WR_ATOMIC_CMP_AND_SWP
            RW, RR = W.IBV_WR_RDMA_WRITE, W.IBV_WR_RDMA_READ
            case('write-bad-rkey', RW, 64, BAD_KEY, OPEN)
            case('read-bad-rkey', RR, 64, BAD_KEY, OPEN)
            case('fetch-add-bad-rkey', FA, 8, BAD_KEY, OPEN)
            case('cmp-swap-bad-rkey', CS, 8, BAD_KEY, OPEN)
            case('write-past-mr', RW, 64, OPEN_KEY, OPEN + 8192 - 32)
            case('write-before-mr', RW, 64, OPEN_KEY, OPEN - 64)
            case('write-into-canary', RW, 64, OPEN_KEY, CANARY)
            case('write-wraps', RW, 64, OPEN_KEY, TOP)
            case('read-past-mr', RR, 64, OPEN_KEY, OPEN + 8192 - 32)
            case('read-canary', RR, 64, OPEN_KEY, CANARY)
            case('fetch-add-past-mr', FA, 8, OPEN_KEY, OPEN + 8192)
            case('fetch-add-misaligned', FA, 8, OPEN_KEY, OPEN + 4)
            case('write-longer-than-mr', RW, 16384, OPEN_KEY, OPEN)
            case('read-longer-than-mr', RR, 16384, OPEN_KEY, OPEN)
            case('write-read-only-mr', RW, 64, RO_KEY, RO)
            case('fetch-add-read-only-mr', FA, 8, RO_KEY, RO)
            case('read-local-only-mr', RR, 64, CANARY_KEY, CANARY)
            case('write-local-only-mr', RW, 64, CANARY_KEY, CANARY)
            case('write-qp-no-remote-write', RW, 64, OPEN_KEY, OPEN, 'no-remote-write')
            case('read-qp-no-remote-read', RR, 64, OPEN_KEY, OPEN, 'no-remote-read')

            def flood(name, op, n, size, key, addr_of, recvs=0, depth=128):
                cq, q = connected(depth, 'all', recvs)
                posted, done, counts, refused = 0, 0, {}, 0
                last = time.time()
                while done < posted or posted < n:
                    while posted < n and posted - done < depth:
                        try:
                            q.post_send(wr(posted, op, size, key, addr_of(posted), (posted % 32) * 1024))
                        except Exception as ex:
                            refused += 1
                            n = posted  # the provider takes no more: count what it refused, stop posting
                            break
                        posted += 1
                    k, wcs = cq.poll(num_entries=32)
                    if k > 0:
                        for w in wcs[:k]:
                            counts[status(w.status)] = counts.get(status(w.status), 0) + 1
                        done += k
                        last = time.time()
                    elif time.time() - last > 60:
                        break
                    else:
                        time.sleep(0.0002)
                print('ATTACK flood=%s posted=%d completed=%d post_refused=%d %s' % (name, posted, done, refused,
                      ' '.join('%s=%d' % kv for kv in sorted(counts.items()))), flush=True)

            flood('write', RW, 4000, 1024, SINK_KEY, lambda i: SINK + (i % 32) * 1024)
            flood('bad-rkey-write', RW, 500, 1024, BAD_KEY, lambda i: OPEN)
            flood('send', W.IBV_WR_SEND, 1000, 256, 0, lambda i: 0, recvs=100)
            print('ATTACK victim says %s' % ' '.join(ask('DONE')), flush=True)
            print('ATTACK done', flush=True)
            """;

    static final String SCRIPT = GuestScripts.rdmaUp("$ERNIC_GUEST_IP") + """
            srv=192.168.77.1
            peer=192.168.77.$(( (ERNIC_VM_INDEX + 1) % 2 + 1 ))
            for i in $(seq 1 60); do ping -c 1 -W 1 $peer > /dev/null && break; sleep 1; done
            cat > /tmp/victim.py <<'PYEOF'
            @VICTIM@
            PYEOF
            cat > /tmp/attacker.py <<'PYEOF'
            @ATTACKER@
            PYEOF
            # listening PORT: a TCP socket on PORT in state LISTEN (without connecting to it, which a tool would take
            # for its peer)
            listening() { grep -q ":$(printf '%04X' $1) 0*:0000 0A" /proc/net/tcp /proc/net/tcp6; }
            if [ "$ERNIC_VM_INDEX" = 0 ]; then
                timeout 1200 python3 /tmp/victim.py > /tmp/victim.txt 2>&1 &
                vp=$!
                # The well-behaved peer in guest 1 ping-pongs with this guest across the mesh during the attack.
                timeout 1200 ibv_rc_pingpong -d ionic_0 -g 1 -n 2000 -s 1000 -c -p 18901 > /tmp/mesh-pp.txt 2>&1 &
                mp=$!
                # Own traffic: ping-pong rounds between two processes of this guest until the attack is over, then one more.
                rounds=0; failed=0; during=0
                while :; do
                    [ -e /tmp/attack-done ] && last=yes || last=no
                    [ -e /tmp/attack-started ] && [ $last = no ] && started=yes || started=no
                    timeout 600 ibv_rc_pingpong -d ionic_0 -g 1 -n 500 -s 1000 -c -p 18900 > /tmp/pp-s.txt 2>&1 &
                    s=$!
                    for i in $(seq 1 300); do listening 18900 && break; sleep 0.2; done
                    if timeout 600 ibv_rc_pingpong -d ionic_0 -g 1 -n 500 -s 1000 -c -p 18900 localhost > /tmp/pp-c.txt 2>&1
                    then c=0; else c=$?; fi
                    if wait $s; then sv=0; else sv=$?; fi
                    rounds=$((rounds + 1))
                    if [ $c = 0 ] && [ $sv = 0 ] && grep -q '500 iters in' /tmp/pp-c.txt; then ok=yes
                    else ok=no; failed=$((failed + 1)); cat /tmp/pp-s.txt /tmp/pp-c.txt; fi
                    # A round that began while the attack was on overlapped it, however long the attack lasted.
                    [ $started = yes ] && during=$((during + 1))
                    echo "OWN round=$rounds ok=$ok during-attack=$started"
                    [ $last = yes ] && break
                    kill -0 $vp 2>/dev/null || [ -e /tmp/attack-done ] || { echo "OWN victim process gone"; break; }
                done
                echo "OWN rounds=$rounds failed=$failed during-attack=$during"
                if wait $vp; then v=0; else v=$?; fi
                cat /tmp/victim.txt
                echo "VICTIM exit=$v"
                if wait $mp; then m=0; else m=$?; fi
                cat /tmp/mesh-pp.txt
                echo "RESULT mesh-pingpong server=$m"
            else
                # The well-behaved process: a ping-pong with guest 0, tried until guest 0's end listens.
                (
                    for i in $(seq 1 300); do
                        if timeout 600 ibv_rc_pingpong -d ionic_0 -g 1 -n 2000 -s 1000 -c -p 18901 $srv > /tmp/mesh-pp.txt 2>&1
                        then echo 0 > /tmp/mesh-pp.rc; exit 0; else echo $? > /tmp/mesh-pp.rc; fi
                        sleep 1
                    done
                ) &
                mp=$!
                if timeout 1200 python3 /tmp/attacker.py $srv > /tmp/attacker.txt 2>&1; then a=0; else a=$?; fi
                cat /tmp/attacker.txt
                echo "ATTACK exit=$a"
                wait $mp
                cat /tmp/mesh-pp.txt
                echo "RESULT mesh-pingpong client=$(cat /tmp/mesh-pp.rc)"
            fi
            hw=/sys/class/infiniband/ionic_0/ports/1/hw_counters
            for c in completion_errors err_remote_acc err_remote_inv_req err_wqe_flushed err_rnr_retry_exceeded \\
                    qp_flushes refusals rx_remote_reqs; do
                echo "hwc $c $(cat $hw/$c)"
            done
            if dmesg | grep -iE 'ionic.*(error|fail|timed out|bad)' | grep -v 'module verification'; then echo "DMESG-ERRORS"; fi
            """.replace("@VICTIM@", VICTIM_PY.strip()).replace("@ATTACKER@", ATTACKER_PY.strip());


    @Test
    void aHostileGuestGetsHardwareErrorsWhileTheVictimsTrafficRunsOn() throws Exception {
        String out = GuestRunTest.guestRunScript("mesh-hostile.sh", SCRIPT, "--vms", "2");
        assertThat(out).contains("vm1| ATTACK done").contains("vm1| ATTACK exit=0")
                .contains("vm0| VICTIM done").contains("vm0| VICTIM exit=0").doesNotContain("DMESG-ERRORS");
        String[][] expected = {
                {"write-bad-rkey", "REM_ACCESS_ERR"}, {"read-bad-rkey", "REM_ACCESS_ERR"},
                {"fetch-add-bad-rkey", "REM_ACCESS_ERR"}, {"cmp-swap-bad-rkey", "REM_ACCESS_ERR"},
                {"write-past-mr", "REM_ACCESS_ERR"}, {"write-before-mr", "REM_ACCESS_ERR"},
                {"write-into-canary", "REM_ACCESS_ERR"}, {"write-wraps", "REM_ACCESS_ERR"},
                {"read-past-mr", "REM_ACCESS_ERR"}, {"read-canary", "REM_ACCESS_ERR"},
                {"fetch-add-past-mr", "REM_ACCESS_ERR"}, {"fetch-add-misaligned", "REM_INV_REQ_ERR"},
                {"write-longer-than-mr", "REM_ACCESS_ERR"}, {"read-longer-than-mr", "REM_ACCESS_ERR"},
                {"write-read-only-mr", "REM_ACCESS_ERR"}, {"fetch-add-read-only-mr", "REM_ACCESS_ERR"},
                {"read-local-only-mr", "REM_ACCESS_ERR"}, {"write-local-only-mr", "REM_ACCESS_ERR"},
                // A QP without the remote right: RC's NAK invalid request (rxe's class C).
                {"write-qp-no-remote-write", "REM_INV_REQ_ERR"}, {"read-qp-no-remote-read", "REM_INV_REQ_ERR"},
        };
        for (String[] c : expected) {
            // The hardware's status for the bad request, then RC's flushes of the two good WRITEs behind it. (They
            // once went missing in a few cases per run: libionic drops the flush it owes when a poll ends on the
            // error completion with nothing visible after it; the device now lets the error out only after the
            // flush completion behind it, CompletionQueue#hold.)
            assertThat(out).as("case %s", c[0]).contains("vm1| ATTACK case=" + c[0] + " status=IBV_WC_" + c[1]
                    + " then=IBV_WC_WR_FLUSH_ERR,IBV_WC_WR_FLUSH_ERR\n");
        }
        // The floods: every WRITE landed; the bad-key flood fails once and flushes the rest; the SENDs take the
        // 100 receives posted, then wait for one that never comes (RNR retries exceeded) and flush the rest.
        assertThat(flood(out, "write")).isEqualTo("posted=4000 completed=4000 post_refused=0 IBV_WC_SUCCESS=4000");
        assertThat(flood(out, "bad-rkey-write")).matches(
                "posted=(\\d+) completed=\\1 post_refused=\\d+ IBV_WC_REM_ACCESS_ERR=1 IBV_WC_WR_FLUSH_ERR=\\d+");
        // (Whether the provider still takes posts on a QP in ERROR, to flush them, is its business: either is fine.)
        assertThat(flood(out, "send")).matches("posted=(\\d+) completed=\\1 post_refused=[01] IBV_WC_RNR_RETRY_EXC_ERR=1"
                + " IBV_WC_SUCCESS=100( IBV_WC_WR_FLUSH_ERR=\\d+)?");
        // The victim: nothing landed outside what it allowed; the flood's data did land where it was allowed.
        assertThat(out).containsPattern("vm0\\| VICTIM receives IBV_WC_SUCCESS=100\\s")
                .contains("vm0| VICTIM open-mr untouched=True").contains("vm0| VICTIM read-only-mr untouched=True")
                .contains("vm0| VICTIM canary untouched=True").contains("vm0| VICTIM sink flooded=True");
        // The victim's own traffic ran on: every ping-pong round between its processes passed its payload check,
        // some while the attack went on, and the well-behaved peer's ping-pong across the mesh finished.
        Matcher own = Pattern.compile("vm0\\| OWN rounds=(\\d+) failed=(\\d+) during-attack=(\\d+)").matcher(out);
        assertThat(own.find()).as("the victim's own rounds").isTrue();
        assertThat(Integer.parseInt(own.group(2))).as("failed rounds").isZero();
        assertThat(Integer.parseInt(own.group(3))).as("rounds during the attack").isPositive();
        assertThat(out).contains("vm0| RESULT mesh-pingpong server=0").contains("vm1| RESULT mesh-pingpong client=0")
                .containsPattern("vm1\\| 2000 iters in");
    }

    /** The attacker's summary of flood {@code name}: what follows its name. */
    static String flood(String out, String name) {
        Matcher m = Pattern.compile("vm1\\| ATTACK flood=" + Pattern.quote(name) + " (.*)").matcher(out);
        assertThat(m.find()).as("flood %s in the output", name).isTrue();
        return m.group(1).strip();
    }
}
