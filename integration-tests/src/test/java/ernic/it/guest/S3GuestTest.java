package ernic.it.guest;

import ernic.ionic.IonicDevice;
import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.server.ErnicServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-process S3 store ({@code --backend s3}) against the stock clients in the real guest, with their
 * default settings (an endpoint URL, dummy credentials and a region; nothing else configured): ping, the aws
 * cli (a small and a 40 MiB object both ways, ls, head-object, rm and the 404 after it), s3cmd, boto3, a
 * ranged GET with curl, and a pyverbs client that moves 1 MiB by rkey with {@code x-amz-rdma-token}. One boot;
 * each check prints {@code CHECK <name> ok} or {@code CHECK <name> FAIL}, so one failure does not hide the rest.
 */
@ExtendWith(GuestPrerequisites.class)
class S3GuestTest {
    static final String GUEST_IP = "192.168.200.2";
    static final String STORE_IP = "192.168.200.1";

    /** pyverbs: a 1 MiB MR, the 44-byte token (docs/s3.md), PUT and GET through it, and a bad rkey refused. */
    static final String TOKEN_PY = """
            import os, struct, http.client
            from pyverbs.device import Context
            from pyverbs.pd import PD
            from pyverbs.mr import MR
            import pyverbs.libibverbs_enums as e

            A = e.ibv_access_flags
            N = 1 << 20
            BAD_KEY = 0x00fffe00 | 0x5a  # an index no MR has
            ctx = Context(name='ionic_0')
            pd = PD(ctx)
            mr = MR(pd, N, A.IBV_ACCESS_LOCAL_WRITE | A.IBV_ACCESS_REMOTE_WRITE | A.IBV_ACCESS_REMOTE_READ)
            gid = bytes.fromhex(str(ctx.query_gid(1, 1)).replace(':', ''))

            def token(rkey, addr, length):
                # transport RC, QPN, GID, rkey, address, length, port, LID: 44 bytes little-endian, 88 hex
                return struct.pack('<BI16sIQQBH', 1, 0, gid, rkey, addr, length, 1, 0).hex()

            def req(method, key, tok=None):
                c = http.client.HTTPConnection('%s', 9000, timeout=120)
                h = {'x-amz-content-sha256': 'UNSIGNED-PAYLOAD'}
                if tok is not None:
                    h['x-amz-rdma-token'] = tok
                c.request(method, '/ernic/' + key, body=b'' if method == 'PUT' else None, headers=h)
                r = c.getresponse()
                b = r.read()
                c.close()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, b

            def show(what, s, h, b):
                print('TOKEN %%s status=%%d reply=%%s bytes=%%s body=%%d' %% (what, s, h.get('x-amz-rdma-reply'),
                      h.get('x-amz-rdma-bytes-transferred'), len(b)), flush=True)

            data = os.urandom(N)
            mr.write(data, N)
            s, h, b = req('PUT', 'rdma/obj', token(mr.rkey, mr.buf, N))
            show('put', s, h, b)
            s, h, b = req('GET', 'rdma/obj')
            print('TOKEN plain-get status=%%d exact=%%s' %% (s, b == data), flush=True)
            mr.write(bytes(N), N)
            s, h, b = req('GET', 'rdma/obj', token(mr.rkey, mr.buf, N))
            show('get', s, h, b)
            print('TOKEN get-exact=%%s' %% (mr.read(N, 0) == data), flush=True)
            mr.write(bytes(N), N)
            s, h, b = req('GET', 'rdma/obj', token(BAD_KEY, mr.buf, N))
            show('get-bad-rkey', s, h, b)
            print('TOKEN get-bad-rkey-untouched=%%s' %% (mr.read(N, 0) == bytes(N)), flush=True)
            s, h, b = req('PUT', 'rdma/bad', token(BAD_KEY, mr.buf, N))
            show('put-bad-rkey', s, h, b)
            s, h, b = req('HEAD', 'rdma/bad')
            print('TOKEN put-bad-rkey-head status=%%d' %% s, flush=True)
            print('TOKEN done', flush=True)
            """.formatted(STORE_IP);

    static final String BOTO3_PY = """
            import os, boto3
            s3 = boto3.client('s3', endpoint_url=os.environ['EP'])
            body = os.urandom(100000)
            s3.put_object(Bucket='ernic', Key='boto/obj', Body=body)
            got = s3.get_object(Bucket='ernic', Key='boto/obj')['Body'].read()
            print('BOTO3 get exact=%s' % (got == body))
            keys = [o['Key'] for o in s3.list_objects_v2(Bucket='ernic', Prefix='boto/').get('Contents', [])]
            print('BOTO3 list keys=%s' % keys)
            s3.delete_object(Bucket='ernic', Key='boto/obj')
            print('BOTO3 after-delete count=%d' % s3.list_objects_v2(Bucket='ernic', Prefix='boto/')['KeyCount'])
            assert got == body and keys == ['boto/obj']
            print('BOTO3 done')
            """;

    static final String SCRIPT = GuestScripts.rdmaUp(GUEST_IP) + """
            EP=http://%1$s:9000
            export EP AWS_ACCESS_KEY_ID=ernic AWS_SECRET_ACCESS_KEY=ernic-secret AWS_DEFAULT_REGION=us-east-1
            check() { # name, command: runs it, prints its output and CHECK name ok|FAIL
                name=$1; shift
                t0=$(date +%%s%%N)
                if "$@" > /tmp/check-$name.txt 2>&1; then r=ok; else r="FAIL rc=$?"; fi
                sed "s/^/  $name| /" /tmp/check-$name.txt | tail -n 30
                echo "CHECK $name $r ($(( ($(date +%%s%%N) - t0) / 1000000 )) ms)"
            }
            s3() { timeout 900 aws --endpoint-url "$EP" s3 "$@"; }
            s3api() { timeout 300 aws --endpoint-url "$EP" s3api "$@"; }
            aws --version
            check ping ping -c 3 -W 5 %1$s
            ip neigh show %1$s
            head -c 4096 /dev/urandom > /tmp/small
            head -c 41943040 /dev/urandom > /tmp/big
            check cp-small-up s3 cp /tmp/small s3://ernic/small
            check cp-big-up s3 cp /tmp/big s3://ernic/dir/big
            check cp-small-down s3 cp s3://ernic/small /tmp/small.back
            check cmp-small cmp /tmp/small /tmp/small.back
            check cp-big-down s3 cp s3://ernic/dir/big /tmp/big.back
            check cmp-big cmp /tmp/big /tmp/big.back
            check ls s3 ls --recursive s3://ernic
            check head-object s3api head-object --bucket ernic --key dir/big
            check rm s3 rm s3://ernic/small
            if s3api head-object --bucket ernic --key small > /tmp/h404.txt 2>&1; then r="FAIL (still there)";
            elif grep -q '(404)' /tmp/h404.txt; then r=ok; else r="FAIL (not a 404)"; fi
            sed 's/^/  head-404| /' /tmp/h404.txt
            echo "CHECK head-404 $r"
            cat > /tmp/s3cfg <<'EOF'
            [default]
            access_key = ernic
            secret_key = ernic-secret
            host_base = %1$s:9000
            host_bucket = %1$s:9000
            use_https = False
            EOF
            check s3cmd-put timeout 300 s3cmd -c /tmp/s3cfg put /tmp/small s3://ernic/s3cmd/small
            check s3cmd-get timeout 300 s3cmd -c /tmp/s3cfg get --force s3://ernic/s3cmd/small /tmp/s3cmd.back
            check s3cmd-cmp cmp /tmp/small /tmp/s3cmd.back
            check s3cmd-ls timeout 300 s3cmd -c /tmp/s3cfg ls s3://ernic/s3cmd/
            cat > /tmp/boto.py <<'PYEOF'
            %2$s
            PYEOF
            check boto3 timeout 300 python3 /tmp/boto.py
            code=$(curl -s -o /tmp/range -w '%%{http_code}' -r 1000-1999 "$EP/ernic/dir/big")
            echo "curl-range code=$code size=$(stat -c %%s /tmp/range)"
            tail -c +1001 /tmp/big | head -c 1000 > /tmp/range.want
            [ "$code" = 206 ] && cmp /tmp/range /tmp/range.want && echo "CHECK curl-range ok" || echo "CHECK curl-range FAIL"
            # (not token.py: that name would shadow the standard library's token module)
            cat > /tmp/rdma_token_client.py <<'PYEOF'
            %3$s
            PYEOF
            check token timeout 300 python3 /tmp/rdma_token_client.py
            echo "s3-script done"
            """.formatted(STORE_IP, BOTO3_PY.strip(), TOKEN_PY.strip());

    static final String[] CHECKS = {"ping", "cp-small-up", "cp-big-up", "cp-small-down", "cmp-small", "cp-big-down",
            "cmp-big", "ls", "head-object", "rm", "head-404", "s3cmd-put", "s3cmd-get", "s3cmd-cmp", "s3cmd-ls",
            "boto3", "curl-range", "token"};


    @Test
    void stockClientsAndTheTokenPathAgainstTheStore() throws Exception {
        Path work = GuestPrerequisites.workDir("s3");
        Path socket = GuestPrerequisites.socketIn(work);
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(socket.toString()).withBackend("s3"))) {
            GuestResult r = new GuestVm(0, work.resolve("vm0"), socket, System.out).run(SCRIPT);
            System.out.println(r);
            Map<String, Long> c = server.vfioUser().eventLoop().submit(() -> server.counterRegistry().totals()).get();
            c.forEach((k, v) -> {
                if (k.startsWith("s3.") && v != 0) {
                    System.out.println("counter " + k + " " + v);
                }
            });
            Map<String, Long> dev = ((IonicDevice) server.device()).lastSessionCounters();
            dev.forEach((k, v) -> {
                if (k.startsWith("device.")) {
                    System.out.println("counter eth." + k + " " + v);
                }
            });
            String out = r.output();
            assertThat(r.exitStatus()).as("guest script; console tail:\n%s\noutput:\n%s", r.consoleTail(40), out)
                    .isZero();
            assertThat(out).as(out).contains("s3-script done");
            for (String check : CHECKS) {
                assertThat(out).as("check %s\n%s", check, out).containsPattern("(?m)^CHECK " + check + " ok\\b");
            }
            assertThat(out).contains("lladdr 02:53:c0:a8:c8:01")
                    .containsPattern("ls\\| .*\\b41943040 dir/big")
                    .containsPattern("head-object\\| .*\"ContentLength\": 41943040")
                    .containsPattern("head-object\\| .*\"ETag\": \"\\\\\"[0-9a-f]{32}-\\d+\\\\\"\"")
                    .contains("curl-range code=206 size=1000")
                    .contains("BOTO3 get exact=True").contains("BOTO3 list keys=['boto/obj']")
                    .contains("BOTO3 after-delete count=0")
                    .contains("TOKEN put status=200 reply=200 bytes=1048576 body=0")
                    .contains("TOKEN plain-get status=200 exact=True")
                    .contains("TOKEN get status=200 reply=200 bytes=1048576 body=0")
                    .contains("TOKEN get-exact=True")
                    .containsPattern("TOKEN get-bad-rkey status=400 reply=400 ")
                    .contains("TOKEN get-bad-rkey-untouched=True")
                    .containsPattern("TOKEN put-bad-rkey status=400 reply=400 ")
                    .contains("TOKEN put-bad-rkey-head status=404")
                    .contains("TOKEN done");
            assertThat(c.get("s3.net.icmp_echo_replies")).as("ping replies").isGreaterThanOrEqualTo(3);
            assertThat(c.get("s3.rdma.transfers")).as("token transfers").isGreaterThanOrEqualTo(2);
            assertThat(c.get("s3.rdma.refused")).as("bad rkeys").isGreaterThanOrEqualTo(2);
            assertThat(c.get("s3.bytes.rdma_in")).isGreaterThanOrEqualTo(1 << 20);
            assertThat(c.get("s3.bytes.rdma_out")).isGreaterThanOrEqualTo(1 << 20);
            assertThat(c.get("s3.bytes.body_in")).as("aws cli uploads").isGreaterThan(40L << 20);
            assertThat(c.get("s3.tcp.connections")).as("connections opened").isGreaterThan(10);
            // The store's frames never left the device: claimed from TX, queued into the guest's RX ring (the
            // 40 MiB upload alone is at least 40 MiB / 1460 frames: the MTU is 1500).
            assertThat(dev.get("device.tx_claimed")).as("frames claimed").isGreaterThan(40_000L * 1024 / 1500);
            assertThat(dev.get("device.guest_queue_delivered")).as("frames delivered").isGreaterThan(40_000L * 1024 / 1500);
        }
    }
}
