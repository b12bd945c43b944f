package io.lastunit.admin.cli;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.shard.v1.CountItemsRequest;
import io.lastunit.api.shard.v1.CountItemsResponse;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.tls.ClientTls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Asks shard nodes directly (the internal {@code ShardService}, on the address the topology
 * gives; plaintext, TLS trusting their CA, or mutual TLS as an admin) — all of them in parallel, each under its own deadline. An answer is either a
 * value or the reason the shard could not be asked. Closes its channels on {@link #close()}. Not
 * thread-safe.
 */
public final class ShardProbe implements AutoCloseable {
    /** One shard's answer: {@code value} or {@code error} (why it could not be asked). */
    public record Answer<T>(ShardInfo shard, T value, String error) {
        public boolean ok() {
            return error == null;
        }
    }

    private final Map<String, ManagedChannel> channels = new LinkedHashMap<>();
    private final ClientTls tls;

    /** Plaintext to the shard nodes. */
    public ShardProbe() {
        this(ClientTls.PLAINTEXT);
    }

    /** @param tls how to dial the shard nodes: plaintext, TLS trusting their CA, or mutual TLS as an admin */
    public ShardProbe(ClientTls tls) {
        this.tls = tls;
    }

    /** The probe's channel to a shard node at {@code host:port} (owned by the probe). */
    public ManagedChannel channel(String address) {
        return channels.computeIfAbsent(address, a -> {
            try {
                return tls.applyTo(NettyChannelBuilder.forTarget(a)).build();
            } catch (IllegalStateException e) {
                throw CliError.usage(e.getMessage());
            }
        });
    }

    /** CheckInvariants on every shard; {@code tenant} and {@code item} may be empty (= all). */
    public List<Answer<InvariantReport>> checkInvariants(List<ShardInfo> shards, String tenant, String item,
            Duration timeout) throws InterruptedException {
        CheckInvariantsRequest req = CheckInvariantsRequest.newBuilder().setTenantId(tenant).setItemId(item).build();
        return ask(shards, timeout, ch -> ShardServiceGrpc.newFutureStub(ch)
                .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS).checkInvariants(req));
    }

    /** CountItems of {@code tenant} on every shard. */
    public List<Answer<CountItemsResponse>> countItems(List<ShardInfo> shards, String tenant, Duration timeout)
            throws InterruptedException {
        CountItemsRequest req = CountItemsRequest.newBuilder().setTenantId(tenant).build();
        return ask(shards, timeout, ch -> ShardServiceGrpc.newFutureStub(ch)
                .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS).countItems(req));
    }

    private <T> List<Answer<T>> ask(List<ShardInfo> shards, Duration timeout,
            Function<ManagedChannel, ListenableFuture<T>> call) throws InterruptedException {
        List<ListenableFuture<T>> futures = new ArrayList<>();
        for (ShardInfo s : shards) {
            futures.add(call.apply(channel(s.getAddress())));
        }
        List<Answer<T>> answers = new ArrayList<>();
        for (int i = 0; i < shards.size(); i++) {
            ShardInfo s = shards.get(i);
            try {
                answers.add(new Answer<>(s, futures.get(i).get(timeout.toMillis() + 5_000, TimeUnit.MILLISECONDS), null));
            } catch (ExecutionException e) {
                answers.add(new Answer<>(s, null, describe(e.getCause(), timeout)));
            } catch (java.util.concurrent.TimeoutException e) {
                futures.get(i).cancel(true);
                answers.add(new Answer<>(s, null, "no answer within " + timeout.toSeconds() + " s"));
            }
        }
        return answers;
    }

    /** A failed call in one line: the gRPC code and its description, never a stack trace. */
    static String describe(Throwable t, Duration timeout) {
        Status st = Status.fromThrowable(t);
        return switch (st.getCode()) {
            case UNAVAILABLE -> "unreachable (UNAVAILABLE" + (st.getDescription() == null ? "" : ": " + st.getDescription()) + ")";
            case DEADLINE_EXCEEDED -> "no answer within " + timeout.toSeconds() + " s (DEADLINE_EXCEEDED)";
            case UNKNOWN -> "failed: " + (st.getDescription() != null ? st.getDescription() : String.valueOf(t));
            default -> "failed: " + st.getCode() + (st.getDescription() == null ? "" : ": " + st.getDescription());
        };
    }

    @Override
    public void close() {
        for (ManagedChannel ch : channels.values()) {
            ch.shutdownNow();
        }
        for (ManagedChannel ch : channels.values()) {
            try {
                ch.awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        channels.clear();
    }
}
