/**
 * Small facts every module shares and writes once: byte-order layouts ({@link ernic.common.Be}, {@link ernic.common.Le}),
 * the Internet checksum, IP addresses. Depends on nothing.
 */
package ernic.common;
