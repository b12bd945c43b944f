package io.lastunit.common.channel;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.common.tls.ClientTls;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * One long-lived, kept-alive channel per shard node address, shared by every call a service
 * (router, bucket-balancer) makes there: a gRPC channel multiplexes calls over one HTTP/2
 * connection and reconnects by itself. Channels to addresses that left the topology are closed by
 * {@link #retain}. How a channel is dialled is the service's choice ({@link Dial}). Thread-safe.
 *
 * <p>A channel that cannot connect waits between attempts by gRPC's backoff, which grows by 1.6
 * per failed attempt up to 120 s, and fails every call at once meanwhile. So after a link to a
 * node was down for a while, its calls kept failing for a good part of that while again after the
 * link healed (RouterShardLinkFaultIT measured 4.6 s more after a 6.6 s cut). {@link #get} therefore
 * cuts the wait short: a channel in TRANSIENT_FAILURE that is asked for is told to connect again
 * at once, at most once per {@link #RECONNECT_WAIT_MAX}. A node nobody calls is not dialled.
 *
 * <p>Hazard: {@link #close} cuts every call in flight and then waits up to {@code closeWait} for
 * each channel in turn, so a service's stop can take that long per shard node.
 */
public final class ShardChannels implements AutoCloseable {

    /**
     * How a service dials a shard node: as {@code tls} says (plaintext, TLS trusting the shard nodes'
     * CA, or mutual TLS with the service's own certificate); keep-alive pings every 30 s,
     * also when idle (10 s timeout), so a dead peer is found before the next call; a reply larger
     * than {@code inboundMessageBytesMax} fails its call.
     *
     * @param directExecutor   replies run on the transport thread that read them, with no hand-off:
     *                         only for callers whose reply handling never blocks
     * @param transparentRetry gRPC's own retry of calls that never reached the server; off for a
     *                         caller that retries by its own bounds (it buffers every call for nothing)
     */
    public record Dial(ClientTls tls, int inboundMessageBytesMax, boolean directExecutor,
                       boolean transparentRetry) {
        public Dial {
            java.util.Objects.requireNonNull(tls, "tls (ClientTls.PLAINTEXT for plaintext)");
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
            tls.applyTo(b);
            if (interceptors.length > 0) {
                b.intercept(interceptors);
            }
            return b.build();
        }
    }

    /** The longest a channel that cannot connect, and is asked for, waits before it tries again. */
    public static final Duration RECONNECT_WAIT_MAX = Duration.ofSeconds(1);

    /** A channel and when it was last told to skip its backoff. */
    private record Held(ManagedChannel channel, AtomicLong backoffSkippedAtNanos) {
    }

    private final ConcurrentHashMap<String, Held> channels = new ConcurrentHashMap<>();
    private final Function<String, ManagedChannel> open;
    private final Duration closeWait;
    private final LongSupplier nanoClock;
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
        this(open, closeWait, System::nanoTime);
    }

    /** @param nanoClock {@link System#nanoTime()} or a test's clock: when a failing channel may try again */
    public ShardChannels(Function<String, ManagedChannel> open, Duration closeWait, LongSupplier nanoClock) {
        if (closeWait.isNegative()) {
            throw new IllegalArgumentException("closeWait must not be negative, got " + closeWait);
        }
        this.open = open;
        this.closeWait = closeWait;
        this.nanoClock = nanoClock;
    }

    /** The channel to {@code address}, opened on first use; one that cannot connect is told to try again (see above). */
    public ManagedChannel get(String address) {
        if (closed) {
            throw new IllegalStateException("shard channels are closed");
        }
        Held held = channels.computeIfAbsent(address, a -> new Held(open.apply(a),
                new AtomicLong(nanoClock.getAsLong() - RECONNECT_WAIT_MAX.toNanos())));
        skipBackoffIfFailing(held);
        return held.channel();
    }

    private void skipBackoffIfFailing(Held held) {
        if (held.channel().getState(false) != ConnectivityState.TRANSIENT_FAILURE) {
            return;
        }
        long now = nanoClock.getAsLong();
        long last = held.backoffSkippedAtNanos().get();
        if (now - last >= RECONNECT_WAIT_MAX.toNanos() && held.backoffSkippedAtNanos().compareAndSet(last, now)) {
            held.channel().resetConnectBackoff();
        }
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
            e.getValue().channel().shutdown();
            onRemoved.accept(e.getValue().channel());
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
        for (Held h : channels.values()) {
            h.channel().shutdownNow();
        }
        if (!closeWait.isZero()) {
            for (Held h : channels.values()) {
                try {
                    h.channel().awaitTermination(closeWait.toNanos(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        channels.clear();
    }
}
