/**
 * The in-process NVMe-oF target: an NVMe over RDMA controller (discovery and one namespace in RAM or a file) that the
 * guest's stock {@code nvme-rdma} initiator connects to. {@link ernic.nvmeof.NvmeofAttachment} puts it on the device's
 * RDMA side as an {@link ernic.attach.Attachment}: its connection manager answers the guest's CM MADs on QP 1, and the
 * QPs it connects carry command capsules; data moves only through {@link ernic.attach.HostMemory}. Depends on
 * ernic.attach, ernic.counters and ernic.common only (docs/nvmeof.md).
 */
package ernic.nvmeof;
