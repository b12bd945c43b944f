package io.lastunit.balancer.transfer;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.File;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * One long-lived channel per shard node address, shared by every call the balancer makes there.
 * Channels to addresses that left the topology are closed by {@link #retain}. TLS to the shard
 * nodes when a trust certificate is given. Thread-safe.
 *
 * <p>Hazard: {@code ListLevels} without a tenant answers every item of a shard in one message; the
 * inbound bound {@value #INBOUND_MESSAGE_BYTES_MAX} bytes (about 200,000 items) fails the call,
 * and so the balancing of that shard's cell, beyond it.
 */
public final class ShardChannels implements AutoCloseable {
    /** Largest reply accepted from a shard node. */
    public static final int INBOUND_MESSAGE_BYTES_MAX = 64 << 20;

    private final ConcurrentHashMap<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final File trustCertificate;
    private volatile boolean closed;

    /** @param trustCertificate PEM of the CA that signed the shard nodes' certificates, or null for plaintext */
    public ShardChannels(File trustCertificate) {
        this.trustCertificate = trustCertificate;
    }

    public ManagedChannel get(String address) {
        if (closed) {
            throw new IllegalStateException("shard channels are closed");
        }
        return channels.computeIfAbsent(address, this::open);
    }

    private ManagedChannel open(String address) {
        NettyChannelBuilder b = NettyChannelBuilder.forTarget(address)
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .maxInboundMessageSize(INBOUND_MESSAGE_BYTES_MAX);
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

    /** Closes the channels to addresses not in {@code live}. */
    public void retain(Set<String> live) {
        channels.entrySet().removeIf(e -> {
            if (live.contains(e.getKey())) {
                return false;
            }
            e.getValue().shutdown();
            return true;
        });
    }

    @Override
    public void close() {
        closed = true;
        for (ManagedChannel c : channels.values()) {
            c.shutdownNow();
        }
        for (ManagedChannel c : channels.values()) {
            try {
                c.awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        channels.clear();
    }
}
