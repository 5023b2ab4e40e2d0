/**
 * The Linux calls of the vfio-user library, through FFM (no JNI): sockets, sendmsg/recvmsg with the
 * fds of SCM_RIGHTS ({@link ernic.vfiouser.sys.ScmRights}, the one codec of the control messages, for
 * the server's channel and the client alike), mmap, memfd, eventfd, poll, and native memory by address ({@link ernic.vfiouser.sys.NativeMemory}). Depends on nothing of the
 * project; every package of this module may use it, and so may other modules that need a raw fd
 * (the server's TAP port).
 */
package ernic.vfiouser.sys;
