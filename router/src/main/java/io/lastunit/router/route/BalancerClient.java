package io.lastunit.router.route;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.lastunit.api.balancer.v1.BalancerServiceGrpc;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.utils.PathUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's client of the bucket-balancer leader. The leader publishes {@code host:port} at
 * {@code {namespace}/balancer/endpoint}, an ephemeral znode; this class watches it with a
 * single-node {@link CuratorCache} and keeps one channel to the address it holds: a new address
 * gets a new channel (the old one is shut down gracefully, so pulls in flight finish), a removed
 * or unreadable one leaves none. Channels are dialled as the router dials shard nodes
 * ({@link Router#dial}): TLS trusting the same CA when one is configured, plaintext otherwise.
 *
 * <p>{@link #pull} completes with the leader's answer or fails with {@link Failure} of reason
 * BALANCER_UNAVAILABLE (UNAVAILABLE, with a retry hint) — no endpoint known, no answer before the
 * deadline, a standby's NOT_LEADER, any error — so a dry region is never answered SOLD_OUT
 * because the balancer could not be asked.
 *
 * <p>Lifecycle LATENT → STARTED → CLOSED; {@link #close()} is idempotent and closes the channel.
 * Thread-safe: the target is one volatile reference, changed only on Curator's event thread and
 * by close, under the instance lock.
 *
 * <p>Hazard: while the ZooKeeper session is suspended or lost, the last address is kept. That is
 * safe: a former leader answers NOT_LEADER or not at all, either of which is BALANCER_UNAVAILABLE;
 * the balancer fences its own leadership, the router only finds it.
 */
public final class BalancerClient implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BalancerClient.class);

    /** Below the namespace: the znode holding the leader's {@code host:port}. */
    public static final String ENDPOINT = "balancer/endpoint";
    /** The retry hint of a BALANCER_UNAVAILABLE when the balancer gave none. */
    static final Duration RETRY_AFTER = Duration.ofMillis(500);
    /** Longest {@code host:port} accepted from the znode. */
    static final int ADDRESS_LENGTH_MAX = 255;

    private enum State { LATENT, STARTED, CLOSED }

    /** The leader's address and the channel to it. */
    private record Target(String address, ManagedChannel channel) {
    }

    private final String path;
    private final CuratorCache cache;
    private final Function<String, ManagedChannel> open;
    private State state = State.LATENT;
    private volatile Target target;

    /**
     * @param trustCertificate the CA of {@code shard-trust-certificate}, or null for plaintext
     */
    public BalancerClient(CuratorFramework client, String namespace, File trustCertificate) {
        this(client, namespace, io.lastunit.common.tls.ClientTls.trusting(trustCertificate));
    }

    /** Dials the leader as {@code tls} says (the router's way of dialling shard nodes). */
    public BalancerClient(CuratorFramework client, String namespace, io.lastunit.common.tls.ClientTls tls) {
        this(client, namespace, Router.dial(tls)::open);
    }

    BalancerClient(CuratorFramework client, String namespace, Function<String, ManagedChannel> open) {
        this.path = PathUtils.validatePath(namespace + "/" + ENDPOINT);
        this.cache = CuratorCache.build(client, path, CuratorCache.Options.SINGLE_NODE_CACHE);
        this.open = open;
    }

    /** Starts watching the endpoint; returns at once (the address arrives with Curator's first read). */
    public synchronized BalancerClient start() {
        if (state != State.LATENT) {
            throw new IllegalStateException("balancer client for " + path + " is " + state);
        }
        state = State.STARTED;
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forAll((type, oldData, data) -> follow())
                .forInitialized(this::follow)
                .build());
        cache.start();
        return this;
    }

    /** The leader's address as last read, if any. */
    public Optional<String> endpoint() {
        Target t = target;
        return t == null ? Optional.empty() : Optional.of(t.address);
    }

    /** Asks the leader to pull stock into {@code r.region}; see the class comment for failures. */
    public CompletableFuture<PullResponse> pull(PullRequest r, Deadline deadline) {
        Target t = target;
        if (t == null) {
            return CompletableFuture.failedFuture(Failure.retryable(Reason.BALANCER_UNAVAILABLE,
                    "no balancer leader is published at " + path + " for " + ReserveFlow.describe(r), RETRY_AFTER));
        }
        CompletableFuture<PullResponse> result = new CompletableFuture<>();
        ListenableFuture<PullResponse> f;
        try {
            f = BalancerServiceGrpc.newFutureStub(t.channel).withDeadline(deadline).pull(r);
        } catch (RuntimeException e) {
            result.completeExceptionally(unavailable(t, r, e));
            return result;
        }
        Futures.addCallback(f, new FutureCallback<>() {
            @Override
            public void onSuccess(PullResponse value) {
                result.complete(value);
            }

            @Override
            public void onFailure(Throwable e) {
                result.completeExceptionally(unavailable(t, r, e));
            }
        }, MoreExecutors.directExecutor());
        return result;
    }

    private static Failure unavailable(Target t, PullRequest r, Throwable e) {
        long hintMs = GrpcErrors.retryAfterMs(e);
        String reason = GrpcErrors.errorInfo(e).map(i -> " (" + i.getReason() + ")").orElse("");
        return Failure.retryable(Reason.BALANCER_UNAVAILABLE, "balancer leader at " + t.address + " did not answer "
                + ReserveFlow.describe(r) + ": " + ReserveFlow.why(e) + reason,
                hintMs > 0 ? Duration.ofMillis(hintMs) : RETRY_AFTER);
    }

    /** Points the channel at what the znode holds now. Runs on Curator's event thread. */
    private synchronized void follow() {
        if (state != State.STARTED) {
            return;
        }
        String address = cache.get(path).map(ChildData::getData).map(BalancerClient::address).orElse(null);
        Target old = target;
        if (Objects.equals(old == null ? null : old.address, address)) {
            return;
        }
        target = address == null ? null : new Target(address, open.apply(address));
        if (old != null) {
            old.channel.shutdown();
        }
        log.info("balancer leader endpoint at {}: {} (was {})", path, address, old == null ? null : old.address);
    }

    /** The {@code host:port} in {@code data}, or null when it is not one. */
    static String address(byte[] data) {
        String s = data == null ? "" : new String(data, StandardCharsets.UTF_8).trim();
        int colon = s.lastIndexOf(':');
        if (s.isEmpty() || s.length() > ADDRESS_LENGTH_MAX || colon <= 0 || colon == s.length() - 1) {
            if (!s.isEmpty()) {
                log.error("balancer endpoint '{}' is not host:port; treated as no leader", s);
            }
            return null;
        }
        try {
            int port = Integer.parseInt(s.substring(colon + 1));
            if (port < 1 || port > 65_535) {
                throw new NumberFormatException("port out of range");
            }
        } catch (NumberFormatException e) {
            log.error("balancer endpoint '{}' has no port in 1..65535; treated as no leader", s);
            return null;
        }
        return s;
    }

    @Override
    public synchronized void close() {
        if (state == State.CLOSED) {
            return;
        }
        State was = state;
        state = State.CLOSED;
        if (was == State.STARTED) {
            cache.close();
        }
        Target t = target;
        target = null;
        if (t != null) {
            t.channel.shutdownNow();
        }
    }
}
