package io.lastunit.bench.jmh;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import java.util.concurrent.TimeUnit;

/**
 * What a benchmark's callers share to reach a router: one plaintext HTTP/2 channel (gRPC
 * multiplexes every thread's calls on it, as a client library would) and blocking stubs that
 * send {@code authorization: Bearer <DEV_TOKEN>} on every call. Thread-safe.
 */
final class RouterClient implements AutoCloseable {
    /** Per-call deadline: far above any sane latency, so only a hung call hits it. */
    static final long DEADLINE_SECONDS = 30;

    private final ManagedChannel channel;
    private final InventoryServiceGrpc.InventoryServiceBlockingStub inventory;
    private final InventoryServiceGrpc.InventoryServiceFutureStub inventoryAsync;
    private final HealthGrpc.HealthBlockingStub health;

    RouterClient(int port) {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
        // Answers complete the future stub's futures on the transport thread that read them (the
        // blocking stub waits on its own calling thread either way).
        channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().disableRetry().directExecutor()
                .build();
        inventory = InventoryServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
        inventoryAsync = InventoryServiceGrpc.newFutureStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
        // The same header on the no-op call, so both carry the same bytes.
        health = HealthGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
    }

    /** The inventory stub with a fresh deadline (a deadline is absolute, so one per call). */
    InventoryServiceGrpc.InventoryServiceBlockingStub inventory() {
        return inventory.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    /** The future stub with a fresh deadline, for setup and pipelined callers ({@link Pipeline}). */
    InventoryServiceGrpc.InventoryServiceFutureStub inventoryAsync() {
        return inventoryAsync.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    HealthGrpc.HealthBlockingStub health() {
        return health.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
