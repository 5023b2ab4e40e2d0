/**
 * The RDMA half of the driver model: {@code ionic_rdma.ko}'s probe and admin queue and a libionic-like verbs API
 * ({@link ernic.model.rdma.RdmaVerbs}), written from ionic_fw.h / ionic_if.h ({@link ernic.model.rdma.Fw}).
 * It runs on an {@link ernic.model.IonicDriverModel}, so on either binding. Same dependency rules as
 * {@link ernic.model}.
 */
package ernic.model.rdma;
