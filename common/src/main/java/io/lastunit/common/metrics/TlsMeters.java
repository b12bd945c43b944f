package io.lastunit.common.metrics;

import io.lastunit.common.tls.TlsCredentials;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * A service's mutual-TLS credentials as meters: when its certificate expires (alert before it
 * does), how often new credentials were taken, and how many rotations were refused (a file that
 * does not parse, a key that does not match, an expired certificate: the old credentials stay in
 * use). Stateless.
 */
public final class TlsMeters {
    private TlsMeters() {
    }

    public static void bind(MeterRegistry registry, TlsCredentials credentials) {
        Gauge.builder(Metrics.PREFIX + "tls.certificate.expiry", credentials, c -> c.notAfter().getEpochSecond())
                .baseUnit("seconds")
                .description("When the certificate in use expires (Unix time)").register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "tls.reloads", credentials, TlsCredentials::reloads)
                .description("New TLS credentials taken from their files without a restart").register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "tls.reload.failures", credentials, TlsCredentials::reloadFailures)
                .description("Rotated TLS files refused (the credentials in use were kept)").register(registry);
    }
}
