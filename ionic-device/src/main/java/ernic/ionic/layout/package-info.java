/**
 * Flyweights over the guest-visible structures of ionic_if.h (device commands and completions,
 * identity and info blocks, Ethernet ring entries) and the byte-order accessors {@code Le} and
 * {@code Be} every flyweight is written with. Each offset is named once, with its header field.
 * Anyone in the module may depend on it; it depends on nothing else of ionic.
 */
package ernic.ionic.layout;
