/**
 * The server: {@link ernic.server.Main} and its commands ({@code serve}, {@code p4}), the wiring of one running
 * server ({@link ernic.server.ErnicServer}: the device thread, the ionic device, its TAP, the vfio-user listener),
 * the {@code --backend} forms ({@link ernic.server.Backends}) and the stats file. The one module that depends on
 * all the others; the Prometheus exporter is in {@code ernic.server.metrics}.
 */
package ernic.server;
