package io.lastunit.common.metrics;

/**
 * Where a service serves its metrics: {@code http://host:port/metrics}, Prometheus's text format.
 *
 * @param enabled whether the management port is opened at all (the meters are kept either way:
 *                they are what the service's own checks and {@code top} read)
 * @param host    the address to bind (the service's own by default)
 * @param port    the port; 0 takes a free one, told in the start line and by {@link MetricsServer#port()}
 */
public record MetricsConfig(boolean enabled, String host, int port) {
    public static final MetricsConfig OFF = new MetricsConfig(false, "127.0.0.1", 0);

    public MetricsConfig {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("metrics port must be 0 (any free one) to 65535, got " + port);
        }
        if (enabled && (host == null || host.isBlank())) {
            throw new IllegalArgumentException("metrics host must be set when metrics are enabled");
        }
    }

    /** Enabled on {@code host}, on any free port. */
    public static MetricsConfig on(String host) {
        return new MetricsConfig(true, host, 0);
    }
}
