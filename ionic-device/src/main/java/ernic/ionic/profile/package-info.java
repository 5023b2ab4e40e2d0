/**
 * NIC profiles ({@code --nic-profile}): what the device tells the driver about itself (MSI-X vectors,
 * IDENTIFY, LIF_IDENTIFY, PORT_INIT, LIF_INIT contents, transceiver) and how often it rewrites the
 * statistics blocks, loaded from the built-in profiles and ini files. Anyone in the module (and the
 * server) may depend on it; it depends on no other ionic package.
 */
package ernic.ionic.profile;
