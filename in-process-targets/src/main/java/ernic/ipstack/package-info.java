/**
 * A small IPv4 host for in-process peers on the guest's Ethernet segment: ARP, ICMP echo and TCP (window scaling,
 * retransmission, back-pressure by the guest's receive queue), one {@link ernic.ipstack.IpEndpoint} per address. It
 * is an {@link ernic.attach.FrameClaimer}: the device offers it the guest's frames before the TAP; its frames go to a
 * {@link ernic.ipstack.GuestLink}. Knows neither target.
 */
package ernic.ipstack;
