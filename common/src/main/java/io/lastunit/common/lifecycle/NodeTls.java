package io.lastunit.common.lifecycle;

import io.lastunit.common.metrics.TlsMeters;
import io.lastunit.common.tls.MutualTls;
import io.lastunit.common.tls.TlsCredentials;
import io.micrometer.core.instrument.MeterRegistry;

/** How a node opens its mutual-TLS credentials: read, closed with the node, on its meters. Stateless. */
public final class NodeTls {
    private NodeTls() {
    }

    /**
     * The node's credentials, reloaded from {@code files} until {@code lifecycle} closes them, and
     * bound to {@code registry} when it is not null; null when {@code files} is null (mutual TLS off).
     */
    public static TlsCredentials open(MutualTls files, NodeLifecycle lifecycle, MeterRegistry registry) {
        if (files == null) {
            return null;
        }
        TlsCredentials credentials = TlsCredentials.load(files);
        lifecycle.onClose("TLS credentials", credentials::close);
        if (registry != null) {
            TlsMeters.bind(registry, credentials);
        }
        return credentials;
    }
}
