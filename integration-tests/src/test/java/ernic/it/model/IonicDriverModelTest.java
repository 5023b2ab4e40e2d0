package ernic.it.model;

import ernic.model.IonicDriverModel;
import ernic.model.IonicDriverModel.Completion;
import ernic.vfiouser.server.VfioCounter;
import ernic.server.ErnicServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Path;

import static ernic.model.IonicDriverModel.command;
import static ernic.model.IonicDriverModel.qInit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every ionic device command through the real vfio-user socket, as ionic.ko issues it, with the
 * replies the driver reads and the refusals it can meet (status codes of ionic_if.h).
 */
class IonicDriverModelTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    Path tmp;

    static final int EOPCODE = 2, EQID = 5, EQTYPE = 6, EINVAL = 14;

    ErnicServer server;
    IonicDriverModel drv;

    @BeforeEach
    void start() throws Exception {
        server = ErnicServer.start(ErnicServer.Settings.ionic(tmp.resolve("ernic.sock").toString()));
        drv = IonicDriverModel.connect(server.vfioUser().socketPath());
    }

    @AfterEach
    void stop() {
        drv.close();
        server.close();
    }

    @Test
    void devInfoRegisters() throws Exception {
        assertThat(drv.bar0(IonicDriverModel.SIGNATURE, 4)).isEqualTo(0x44455649L);
        long fw = drv.bar0(IonicDriverModel.FW_STATUS, 1);
        assertThat(fw & 1).as("firmware running").isEqualTo(1);
        byte[] version = drv.bar0Bytes(IonicDriverModel.FW_VERSION, 32);
        assertThat(new String(version, 0, 11)).isEqualTo("1.0.0-ernic");
    }

    @Test
    void identityBlocksHoldWhatTheDriversCheck() throws Exception {
        ByteBuffer id = command(IonicDriverModel.IDENTIFY);
        id.put(1, (byte) 2);
        assertThat(drv.devcmd(id).status()).isZero();
        ByteBuffer dev = drv.devcmdData(64);
        assertThat(dev.getInt(12)).as("nintrs").isEqualTo(32);
        assertThat(dev.getInt(16)).as("ndbpgs_per_lif").isGreaterThanOrEqualTo(2);

        ByteBuffer li = command(IonicDriverModel.LIF_IDENTIFY);
        li.put(2, (byte) 1);
        assertThat(drv.devcmd(li).status()).isZero();
        ByteBuffer lif = drv.devcmdData(512);
        assertThat(lif.getLong(0) & 0x3).as("ETH and RDMA capabilities").isEqualTo(0x3);
        assertThat(lif.getInt(176 + 4 * IonicDriverModel.QTYPE_RXQ)).as("RX queues").isPositive();
        assertThat(lif.getInt(176 + 4 * IonicDriverModel.QTYPE_TXQ)).as("TX queues").isPositive();
        assertThat(lif.getInt(26) - 18).as("max MTU").isEqualTo(9000);
        assertThat(lif.get(392)).as("rdma version").isBetween((byte) 1, (byte) 2);
        assertThat(lif.get(393) & 0xff).as("qp_opcodes").isGreaterThan(10);
        assertThat(lif.get(394) & 0xff).as("admin_opcodes").isGreaterThanOrEqualTo(19);
        assertThat(lif.get(408) & 0xff).as("max_stride").isGreaterThanOrEqualTo(6);
        assertThat(lif.getInt(472 + 4)).as("EQ count").isGreaterThanOrEqualTo(4);
        assertThat(lif.getInt(472 + 8)).as("EQ qid_base").isZero();
    }

    @Test
    void bringUpWritesLinkAndPortStateIntoGuestMemory() throws Exception {
        IonicDriverModel.Bringup b = drv.bringUp();
        var port = drv.mem(b.portInfo(), 4096);
        var lif = drv.mem(b.lifInfo(), 4096);
        assertThat(port.get(ValueLayout.JAVA_INT_UNALIGNED, 260)).as("port speed").isEqualTo(100000);
        assertThat(port.get(ValueLayout.JAVA_BYTE, 317)).as("xcvr phy: copper").isEqualTo((byte) 1);
        assertThat(port.get(ValueLayout.JAVA_SHORT_UNALIGNED, 318)).as("xcvr pid").isEqualTo((short) 1);
        assertThat(lif.get(ValueLayout.JAVA_SHORT_UNALIGNED, 266)).as("link_status UP").isEqualTo((short) 1);
        assertThat(lif.get(ValueLayout.JAVA_INT_UNALIGNED, 268)).as("link_speed").isEqualTo(100000);
    }

    @Test
    void adminQueueCommandsTheDriverPosts() throws Exception {
        drv.bringUp();
        ByteBuffer getMac = command(IonicDriverModel.LIF_GETATTR);
        getMac.put(1, (byte) 3);
        Completion mac = drv.adminq(getMac);
        assertThat(mac.status()).isZero();
        long m = 0;
        for (int i = 0; i < 6; i++) {
            m = m << 8 | (mac.bytes()[4 + i] & 0xff);
        }
        assertThat(m).as("a non-zero unicast MAC").isNotZero();
        assertThat(m >>> 40 & 1).isZero();

        ByteBuffer features = command(IonicDriverModel.LIF_SETATTR);
        features.put(1, (byte) 4).putLong(4, 0xffffL);
        Completion f = drv.adminq(features);
        assertThat(f.status()).isZero();
        assertThat(f.le().getLong(4)).as("granted features: no offloads").isZero();

        ByteBuffer filter = command(IonicDriverModel.RX_FILTER_ADD);
        filter.putShort(8, (short) 1);
        int id1 = drv.adminq(filter).le().getInt(4);
        filter.put(15, (byte) 2);
        int id2 = drv.adminq(filter).le().getInt(4);
        assertThat(id1).isNotEqualTo(id2);

        assertThat(drv.adminq(command(IonicDriverModel.RX_MODE_SET)).status()).isZero();
        assertThat(drv.adminq(command(IonicDriverModel.NOP)).status()).isZero();
        // More commands than the ring has slots: the color flips and completions still match.
        for (int i = 0; i < 40; i++) {
            assertThat(drv.adminq(command(IonicDriverModel.NOP)).status()).isZero();
        }
    }

    @Test
    void queueIdentifyAndQueueCreation() throws Exception {
        drv.bringUp();
        ByteBuffer qid = command(IonicDriverModel.Q_IDENTIFY);
        qid.put(4, (byte) IonicDriverModel.QTYPE_TXQ).put(5, (byte) 3);
        assertThat(drv.devcmd(qid).status()).isZero();
        ByteBuffer tx = drv.devcmdData(32);
        assertThat(tx.getLong(8)).as("no offload features").isZero();
        assertThat(tx.getShort(16)).as("desc_sz").isEqualTo((short) 16);
        assertThat(tx.getShort(18)).as("comp_sz").isEqualTo((short) 16);
        if (tx.get(0) >= 1) {
            assertThat(tx.getShort(20)).as("sg_desc_sz with TXQ version 1").isEqualTo((short) 256);
        }
        long ring = drv.alloc(1024 * 16), cq = drv.alloc(1024 * 16), sg = drv.alloc(1024 * 256);
        Completion q = drv.adminq(qInit(IonicDriverModel.QTYPE_TXQ, 0, 1, 0x5, 10, ring, cq, sg));
        assertThat(q.status()).isZero();
        ByteBuffer ctl = command(IonicDriverModel.Q_CONTROL);
        ctl.put(1, (byte) IonicDriverModel.QTYPE_TXQ).putInt(4, 0).put(8, (byte) 1);
        assertThat(drv.adminq(ctl).status()).isZero();
    }

    @Test
    void refusals() throws Exception {
        drv.bringUp();
        long ring = drv.alloc(64 * 16), cq = drv.alloc(16 * 16);
        assertThat(drv.adminq(qInit(7, 0, 1, 1, 4, ring, cq, 0)).status()).as("unknown queue type").isEqualTo(EQTYPE);
        assertThat(drv.adminq(qInit(IonicDriverModel.QTYPE_TXQ, 999, 1, 1, 4, ring, cq, 0)).status())
                .as("queue index past the LIF's count").isEqualTo(EQID);
        assertThat(drv.adminq(qInit(IonicDriverModel.QTYPE_RXQ, 0, 1, 1, 16, ring, cq, 0)).status())
                .as("ring deeper than 2^15").isEqualTo(EINVAL);
        assertThat(drv.adminq(command(99)).status()).as("unknown opcode, admin queue").isEqualTo(EOPCODE);
        assertThat(drv.devcmd(command(99)).status()).as("unknown opcode, device command").isEqualTo(EOPCODE);
        // and the device goes on serving
        assertThat(drv.adminq(command(IonicDriverModel.NOP)).status()).isZero();
        assertThat(server.vfioUser().count(VfioCounter.PROTOCOL_CLOSES)).isZero();
    }
}
