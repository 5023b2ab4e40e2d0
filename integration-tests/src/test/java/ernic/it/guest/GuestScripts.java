package ernic.it.guest;

import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Pieces of guest scripts that several real-guest tests share. */
final class GuestScripts {
    private GuestScripts() {}

    /**
     * Brings the ionic NIC up with the guest image's {@code ernic-ionic-up} (ionic and ionic_rdma loaded, the
     * netdev, {@code $nd}, up with {@code ip}/24, {@code ionic_0}'s port waited for until ACTIVE).
     */
    static String rdmaUp(String ip) {
        return "nd=$(ernic-ionic-up " + ip + ")\n";
    }

    /**
     * Python (pyverbs) that several guest programs start with: the enums as {@code e}, {@code A}, {@code M},
     * {@code S}; {@code ACC} (local write, remote read and write); {@code ipv4_route(ctx)}, the port's
     * IPv4-mapped GID as a route to itself; {@code rc_qp(pd, cq)}; {@code connect(q, dest, route, access=ACC)},
     * which takes an RC QP through INIT, RTR and RTS toward QP number {@code dest}; {@code status(s)}, a work
     * completion status by name.
     */
    static final String PYVERBS_RC = """
            import pyverbs.libibverbs_enums as e
            from pyverbs.addr import AHAttr, GlobalRoute
            from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
            A, M, S = e.ibv_access_flags, e.ibv_qp_attr_mask, e.ibv_qp_state
            ACC = A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_WRITE | A.IBV_ACCESS_REMOTE_READ

            def ipv4_route(ctx):
                gidx = next(i for i in range(ctx.query_port(1).gid_tbl_len)
                            if str(ctx.query_gid(1, i)).startswith('0000:0000:0000:0000:0000:ffff'))
                return GlobalRoute(dgid=ctx.query_gid(1, gidx), sgid_index=gidx)

            def rc_qp(pd, cq):
                cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
                return QP(pd, QPInitAttr(qp_type=e.ibv_qp_type.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))

            def status(s):
                try:
                    return e.ibv_wc_status(s).name
                except Exception:
                    return 'UNKNOWN_%d' % s

            def connect(q, dest, route, access=ACC):
                a = QPAttr(qp_state=S.IBV_QPS_INIT, port_num=1)
                a.pkey_index = 0
                a.qp_access_flags = access
                q.modify(a, M.IBV_QP_STATE | M.IBV_QP_PKEY_INDEX | M.IBV_QP_PORT | M.IBV_QP_ACCESS_FLAGS)
                a = QPAttr(qp_state=S.IBV_QPS_RTR)
                a.ah_attr = AHAttr(gr=route, is_global=1, port_num=1)
                a.path_mtu = e.ibv_mtu.IBV_MTU_1024
                a.dest_qp_num = dest
                a.rq_psn = 0
                a.max_dest_rd_atomic = 1
                a.min_rnr_timer = 12
                q.modify(a, M.IBV_QP_STATE | M.IBV_QP_AV | M.IBV_QP_PATH_MTU | M.IBV_QP_DEST_QPN | M.IBV_QP_RQ_PSN
                         | M.IBV_QP_MAX_DEST_RD_ATOMIC | M.IBV_QP_MIN_RNR_TIMER)
                a = QPAttr(qp_state=S.IBV_QPS_RTS)
                a.timeout = 14
                a.retry_cnt = 7
                a.rnr_retry = 7
                a.sq_psn = 0
                a.max_rd_atomic = 1
                q.modify(a, M.IBV_QP_STATE | M.IBV_QP_TIMEOUT | M.IBV_QP_RETRY_CNT | M.IBV_QP_RNR_RETRY | M.IBV_QP_SQ_PSN
                         | M.IBV_QP_MAX_QP_RD_ATOMIC)
            """;

    /**
     * {@link #PYVERBS_RC} with what a script that posts its own work requests imports, and ACC with remote atomics:
     * W (the opcodes) and SIG (signalled).
     */
    static final String PYVERBS_WR = PYVERBS_RC + """
            import sys, time
            from pyverbs.device import Context
            from pyverbs.pd import PD
            from pyverbs.cq import CQ
            from pyverbs.mr import MR
            from pyverbs.qp import QP, QPCap, QPInitAttr, QPAttr
            from pyverbs.wr import SGE, SendWR, RecvWR
            from pyverbs.addr import AHAttr, GlobalRoute
            import pyverbs.libibverbs_enums as e

            A = e.ibv_access_flags
            ACC = (A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_WRITE | A.IBV_ACCESS_REMOTE_READ
                   | A.IBV_ACCESS_REMOTE_ATOMIC)
            W = e.ibv_wr_opcode
            SIG = e.ibv_send_flags.IBV_SEND_SIGNALED
            """;

    /**
     * Shell functions for a tool run across two guests: {@code serve NAME CMD...} runs the server end once (3
     * minutes at most); {@code client NAME CMD...} tries the client end until the server listens (5 minutes at
     * most), showing each try that reached the server and failed; a perftest client whose clock fit failed after
     * its transfers is not tried again but says {@code UNTIMED NAME} and passes. Each prints its output, then
     * {@code RESULT NAME server=STATUS} or {@code RESULT NAME client=STATUS}.
     */
    static final String SERVE_AND_CLIENT = """
            serve() {
                name=$1; shift
                if timeout 180 stdbuf -oL -eL "$@" > /tmp/$name.txt 2>&1; then s=0; else s=$?; fi
                cat /tmp/$name.txt
                echo "RESULT $name server=$s"
            }
            client() {
                name=$1; shift
                end=$(( $(date +%s) + 300 ))
                while :; do
                    if timeout 120 stdbuf -oL -eL "$@" > /tmp/$name.txt 2>&1; then c=0; break; else c=$?; fi
                    # perftest's clock fit under TCG can fail after every transfer is done: not the device's
                    if [ $c = 1 ] && grep -q "Can't produce a report" /tmp/$name.txt; then echo "UNTIMED $name"; c=0; break; fi
                    # A try that reached the server and failed (a time-out is 124) is the evidence: the
                    # next try overwrites the file, so it is shown now.
                    if ! grep -q "Couldn't connect" /tmp/$name.txt; then
                        echo "TRY $name client=$c"; tail -n 20 /tmp/$name.txt
                    fi
                    [ "$(date +%s)" -lt $end ] || break
                    sleep 1
                done
                cat /tmp/$name.txt
                echo "RESULT $name client=$c"
            }
            """;

    /**
     * Tool {@code name} of a {@link #SERVE_AND_CLIENT} script passed with its server end in guest 0 and its client
     * in guest 1. An UNTIMED client skips perftest's closing exchange, so its server end fails to exchange data
     * (exit 1) or, with {@code -R}, waits for it until its time-out (124): that server end passes with it.
     */
    static void assertServedAndPassed(String out, String name) {
        assertServedAndPassed(out, name, 0, 1);
    }

    /** {@link #assertServedAndPassed(String, String)} with the server end in guest {@code server}, the client in
     * guest {@code client}. */
    static void assertServedAndPassed(String out, String name, int server, int client) {
        boolean untimed = Pattern.compile("vm" + client + "\\| UNTIMED " + name + "\\s").matcher(out).find();
        assertThat(out).as(name + " with its server end in guest " + server)
                .containsPattern("vm" + server + "\\| RESULT " + name + " server=" + (untimed ? "(0|1|124)" : "0")
                        + "\\b")
                .containsPattern("vm" + client + "\\| RESULT " + name + " client=0\\b");
    }
}
