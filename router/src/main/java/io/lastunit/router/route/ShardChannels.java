package io.lastunit.router.route;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.File;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.net.ssl.SSLException;

/**
 * One long-lived, kept-alive channel per shard node address, shared by every request the router
 * sends there (a gRPC channel multiplexes calls over one HTTP/2 connection and reconnects by
 * itself). Channels to addresses that left the topology are closed by {@link #retain}.
 * TLS to the shard nodes when a trust certificate is configured. Thread-safe.
 */
public final class ShardChannels implements AutoCloseable {
    private final ConcurrentHashMap<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final Function<String, ManagedChannel> open;
    private volatile boolean closed;
    private volatile Consumer<ManagedChannel> onRemoved = c -> { };

    /** @param trustCertificate PEM of the CA that signed the shard nodes' certificates, or null for plaintext */
    public ShardChannels(File trustCertificate) {
        this(address -> open(address, trustCertificate));
    }

    /** Channels made by {@code open} (tests pass in-process channels). */
    public ShardChannels(Function<String, ManagedChannel> open) {
        this.open = open;
    }

    public ManagedChannel get(String address) {
        if (closed) {
            throw new IllegalStateException("shard channels are closed");
        }
        return channels.computeIfAbsent(address, open);
    }

    /**
     * A kept-alive channel to {@code host:port}, over TLS trusting {@code trustCertificate}, or
     * plaintext when it is null. The router dials the balancer leader the same way.
     */
    static ManagedChannel open(String address, File trustCertificate) {
        NettyChannelBuilder b = NettyChannelBuilder.forTarget(address)
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                // Replies are handled without blocking (completing futures, answering the caller),
                // so they run on the transport thread that read them: no hand-off per call.
                .directExecutor()
                // The router retries with its own bounds (attempts-max); gRPC's transparent retry
                // would wrap every call in a buffering RetriableStream for nothing.
                .disableRetry()
                .maxInboundMessageSize(4 << 20);
        if (trustCertificate == null) {
            b.usePlaintext();
        } else {
            try {
                b.sslContext(GrpcSslContexts.forClient().trustManager(trustCertificate).build());
            } catch (SSLException e) {
                throw new IllegalStateException("cannot build TLS context from " + trustCertificate, e);
            }
        }
        return b.build();
    }

    /** Called with each channel {@link #retain} closes (after it is no longer handed out). */
    public void onRemoved(Consumer<ManagedChannel> listener) {
        this.onRemoved = listener;
    }

    /** Closes the channels to addresses not in {@code live}. */
    public void retain(Set<String> live) {
        channels.entrySet().removeIf(e -> {
            if (live.contains(e.getKey())) {
                return false;
            }
            e.getValue().shutdown();
            onRemoved.accept(e.getValue());
            return true;
        });
    }

    public int size() {
        return channels.size();
    }

    @Override
    public void close() {
        closed = true;
        for (ManagedChannel c : channels.values()) {
            c.shutdownNow();
        }
        channels.clear();
    }
}
