package io.lastunit.common.channel;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.File;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.net.ssl.SSLException;

/**
 * One long-lived, kept-alive channel per shard node address, shared by every call a service
 * (router, bucket-balancer) makes there: a gRPC channel multiplexes calls over one HTTP/2
 * connection and reconnects by itself. Channels to addresses that left the topology are closed by
 * {@link #retain}. How a channel is dialled is the service's choice ({@link Dial}). Thread-safe.
 *
 * <p>Hazard: {@link #close} cuts every call in flight and then waits up to {@code closeWait} for
 * each channel in turn, so a service's stop can take that long per shard node.
 */
public final class ShardChannels implements AutoCloseable {

    /**
     * How a service dials a shard node: TLS trusting {@code trustCertificate} (the CA that signed
     * the shard nodes' certificates), or plaintext when it is null; keep-alive pings every 30 s,
     * also when idle (10 s timeout), so a dead peer is found before the next call; a reply larger
     * than {@code inboundMessageBytesMax} fails its call.
     *
     * @param directExecutor   replies run on the transport thread that read them, with no hand-off:
     *                         only for callers whose reply handling never blocks
     * @param transparentRetry gRPC's own retry of calls that never reached the server; off for a
     *                         caller that retries by its own bounds (it buffers every call for nothing)
     */
    public record Dial(File trustCertificate, int inboundMessageBytesMax, boolean directExecutor,
                       boolean transparentRetry) {
        public Dial {
            if (inboundMessageBytesMax < 1) {
                throw new IllegalArgumentException("inboundMessageBytesMax must be >= 1, got " + inboundMessageBytesMax);
            }
        }

        /** A new channel to {@code host:port}. */
        public ManagedChannel open(String address) {
            return open(address, new io.grpc.ClientInterceptor[0]);
        }

        /** A new channel to {@code host:port} whose calls go through {@code interceptors} (metrics). */
        public ManagedChannel open(String address, io.grpc.ClientInterceptor... interceptors) {
            NettyChannelBuilder b = NettyChannelBuilder.forTarget(address)
                    .keepAliveTime(30, TimeUnit.SECONDS)
                    .keepAliveTimeout(10, TimeUnit.SECONDS)
                    .keepAliveWithoutCalls(true)
                    .maxInboundMessageSize(inboundMessageBytesMax);
            if (directExecutor) {
                b.directExecutor();
            }
            if (!transparentRetry) {
                b.disableRetry();
            }
            if (trustCertificate == null) {
                b.usePlaintext();
            } else {
                try {
                    b.sslContext(GrpcSslContexts.forClient().trustManager(trustCertificate).build());
                } catch (SSLException e) {
                    throw new IllegalStateException("cannot build TLS context from " + trustCertificate, e);
                }
            }
            if (interceptors.length > 0) {
                b.intercept(interceptors);
            }
            return b.build();
        }
    }

    private final ConcurrentHashMap<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final Function<String, ManagedChannel> open;
    private final Duration closeWait;
    private volatile boolean closed;
    private volatile Consumer<ManagedChannel> onRemoved = c -> { };

    /**
     * @param closeWait how long {@link #close} waits for each channel to terminate; zero: not at all
     */
    public ShardChannels(Dial dial, Duration closeWait) {
        this(dial::open, closeWait);
    }

    /** Channels made by {@code open} (tests pass in-process channels), closed without waiting. */
    public ShardChannels(Function<String, ManagedChannel> open) {
        this(open, Duration.ZERO);
    }

    public ShardChannels(Function<String, ManagedChannel> open, Duration closeWait) {
        if (closeWait.isNegative()) {
            throw new IllegalArgumentException("closeWait must not be negative, got " + closeWait);
        }
        this.open = open;
        this.closeWait = closeWait;
    }

    public ManagedChannel get(String address) {
        if (closed) {
            throw new IllegalStateException("shard channels are closed");
        }
        return channels.computeIfAbsent(address, open);
    }

    /** Called with each channel {@link #retain} closes (after it is no longer handed out). */
    public void onRemoved(Consumer<ManagedChannel> listener) {
        this.onRemoved = listener;
    }

    /** Shuts down (gracefully: calls in flight finish) the channels to addresses not in {@code live}. */
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

    /** Refuses new channels, cuts every channel's calls and waits up to {@code closeWait} for each. */
    @Override
    public void close() {
        closed = true;
        for (ManagedChannel c : channels.values()) {
            c.shutdownNow();
        }
        if (!closeWait.isZero()) {
            for (ManagedChannel c : channels.values()) {
                try {
                    c.awaitTermination(closeWait.toNanos(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        channels.clear();
    }
}
