/**
 * BAR 0 as the drivers see it (ionic_if.h {@code union ionic_dev_regs}, ionic_regs.h
 * {@code struct ionic_intr}): register offsets, device-command opcodes and status codes, and the
 * interrupt controller (mask, credits, pending latch) behind MSI-X. Anyone in the module may depend on
 * it; it depends on no other ionic package.
 */
package ernic.ionic.regs;
