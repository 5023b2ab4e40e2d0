package ernic.model;

import ernic.vfiouser.client.EventFd;
import ernic.vfiouser.client.GuestRam;
import ernic.vfiouser.client.VfioUserClient;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Messages.IrqInfo;
import ernic.vfiouser.wire.Messages.SetIrqs;
import ernic.vfiouser.wire.ProtocolException;
import ernic.vfiouser.wire.VfioUserMessage;

import java.io.IOException;

/**
 * The model over the real vfio-user socket, as QEMU connects: VERSION, guest RAM as a memfd by DMA_MAP, an
 * eventfd per MSI-X vector. Doorbells are posted REGION_WRITEs (NO_REPLY); a round trip is a BAR 0 read.
 */
public final class SocketBinding implements DeviceBinding {
    /** VFIO_PCI_MSIX_IRQ_INDEX. */
    static final int MSIX = 2;

    private final VfioUserClient client;
    private final GuestRam ram;
    private final EventFd[] msix;

    private SocketBinding(VfioUserClient client, GuestRam ram, EventFd[] msix) {
        this.client = client;
        this.ram = ram;
        this.msix = msix;
    }

    /** Connects to {@code socket} and shares {@code ramBytes} of guest RAM at {@code ramIova}. */
    public static SocketBinding connect(String socket, long ramIova, long ramBytes) throws IOException {
        VfioUserClient client = VfioUserClient.connect(socket);
        GuestRam ram = null;
        EventFd[] msix = null;
        try {
            client.negotiate();
            ram = new GuestRam(ramIova, ramBytes);
            client.map(ram);
            msix = new EventFd[msixCount(client)];
            for (int i = 0; i < msix.length; i++) {
                msix[i] = new EventFd();
                // One fd per SET_IRQS: the protocol's default max_msg_fds, which every server takes.
                client.setIrqs(new SetIrqs(SetIrqs.SIZE, SetIrqs.DATA_EVENTFD | SetIrqs.ACTION_TRIGGER, MSIX, i, 1,
                        null), msix[i].fd());
            }
            return new SocketBinding(client, ram, msix);
        } catch (IOException | RuntimeException e) {
            client.close();
            if (ram != null) {
                ram.close();
            }
            if (msix != null) {
                for (EventFd f : msix) {
                    if (f != null) {
                        f.close();
                    }
                }
            }
            throw e;
        }
    }

    private static int msixCount(VfioUserClient client) throws IOException {
        VfioUserMessage r = client.call(Command.DEVICE_GET_IRQ_INFO,
                new IrqInfo(IrqInfo.SIZE, 0, MSIX, 0).encode(client.alloc()));
        try {
            return IrqInfo.decode(r.payload()).count();
        } catch (ProtocolException e) {
            throw new IOException("bad DEVICE_GET_IRQ_INFO reply: " + e.getMessage());
        } finally {
            r.release();
        }
    }

    /** The client, for tests that speak the protocol itself. */
    public VfioUserClient client() {
        return client;
    }

    @Override
    public GuestRam guestRam() {
        return ram;
    }

    @Override
    public int vectors() {
        return msix.length;
    }

    @Override
    public byte[] readBytes(int region, long offset, int length) throws IOException {
        return client.regionRead(region, offset, length);
    }

    @Override
    public long readLong(int region, long offset, int width) throws IOException {
        return client.regionReadLong(region, offset, width);
    }

    @Override
    public void writeBytes(int region, long offset, byte[] data) throws IOException {
        client.regionWrite(region, offset, data);
    }

    @Override
    public void writeLong(int region, long offset, int width, long value) throws IOException {
        client.regionWriteLong(region, offset, width, value);
    }

    @Override
    public void writePosted(int region, long offset, int width, long value) {
        client.regionWritePosted(region, offset, width, value);
    }

    /** The server handles one connection's messages in order: a BAR 0 read returns after all before it. */
    @Override
    public void sync() throws IOException {
        client.regionReadLong(BAR0, 0, 4);
    }

    @Override
    public void idle() {
    }

    @Override
    public boolean runsOnItsOwn() {
        return true;
    }

    @Override
    public long awaitInterrupt(int vector, int millis) throws IOException {
        return msix[vector].await(millis);
    }

    @Override
    public void reset() throws IOException {
        client.reset();
    }

    @Override
    public void close() {
        client.close();
        ram.close();
        for (EventFd f : msix) {
            f.close();
        }
    }
}
