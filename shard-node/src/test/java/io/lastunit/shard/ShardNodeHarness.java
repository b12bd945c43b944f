package io.lastunit.shard;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import io.micronaut.context.ApplicationContext;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real shard node for integration tests: wired by Micronaut exactly as in production, on the
 * test class's own PostgreSQL database, serving gRPC on a real socket (127.0.0.1, free port),
 * with a plaintext channel to it. Settings can be overridden per test, and the lanes' clock can be
 * a test's own ({@link #withClock}). Calls through its stubs get a deadline of 30 s scaled by
 * {@link TestTimeouts}. Not thread-safe to start/stop concurrently; the stubs are. Public for the
 * tests of the lane package.
 */
public final class ShardNodeHarness implements AutoCloseable {
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(30);

    private final PostgresFixture pg;
    private final String jdbcUrl;
    private final Map<String, Object> overrides;
    /** The lanes' clock when a test gives one; null: the node's own (the system clock). */
    private InstantSource clock;
    private ApplicationContext ctx;
    private ShardNode node;
    private ManagedChannel channel;

    public ShardNodeHarness(PostgresFixture pg, Map<String, Object> overrides) {
        this(pg, pg.jdbcUrl(), overrides);
    }

    public ShardNodeHarness(PostgresFixture pg, String jdbcUrl, Map<String, Object> overrides) {
        this.pg = pg;
        this.jdbcUrl = jdbcUrl;
        this.overrides = overrides;
    }

    /**
     * Runs the node's lanes on {@code clock} instead of the system clock (before {@link #start}):
     * the lanes then estimate the database clock as {@code clock} plus the offset they measure at
     * each bucket load, so a test that advances {@code clock} decides when the lanes see a hold as
     * due, without waiting for real time to pass. The node is then built from the context's
     * {@link ShardConfig} with this clock, as {@code ShardFactory} builds it with the system clock.
     */
    public ShardNodeHarness withClock(InstantSource clock) {
        if (ctx != null) {
            throw new IllegalStateException("the clock is set before start");
        }
        this.clock = clock;
        return this;
    }

    public ShardNodeHarness start() throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("lastunit.shard.id", "test");
        props.put("lastunit.shard.port", 0);
        props.put("lastunit.shard.jdbc-url", jdbcUrl);
        props.put("lastunit.shard.jdbc-user", pg.user());
        props.put("lastunit.shard.jdbc-password", pg.password());
        props.put("lastunit.shard.regions", "local,eu");
        props.putAll(overrides);
        ctx = ApplicationContext.run(props);
        node = clock == null ? ctx.getBean(ShardNode.class) : new ShardNode(ctx.getBean(ShardConfig.class), clock, null);
        node.start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", node.port()).usePlaintext().build();
        return this;
    }

    public ShardNode node() {
        return node;
    }

    ManagedChannel channel() {
        return channel;
    }

    public InventoryServiceGrpc.InventoryServiceBlockingStub blocking() {
        return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(deadlineMillis(), TimeUnit.MILLISECONDS);
    }

    public InventoryServiceGrpc.InventoryServiceFutureStub async() {
        return InventoryServiceGrpc.newFutureStub(channel);
    }

    public InvariantReport checkInvariants() {
        return ShardServiceGrpc.newBlockingStub(channel).withDeadlineAfter(deadlineMillis(), TimeUnit.MILLISECONDS)
                .checkInvariants(CheckInvariantsRequest.getDefaultInstance());
    }

    /** How long a call through this harness may take: 30 s, scaled for slow machines. */
    /**
     * The settings of an embedded PostgreSQL that a fault test stops, kills or fails over: state
     * under {@code state}, fsync off (the faults are crashes of processes, not of the machine, so
     * the page cache survives them) and every wait of the server bounded by a scaled minute.
     */
    public static io.lastunit.shard.store.local.ServerSettings faultTestServer(java.nio.file.Path state) {
        long seconds = (io.lastunit.testkit.TestTimeouts.scaled(java.time.Duration.ofSeconds(60)).toMillis() + 999)
                / 1000;
        return io.lastunit.shard.store.local.ServerSettings.defaults().withStateDirectory(state).withFsync(false)
                .withOperationWait(java.time.Duration.ofSeconds(seconds));
    }

    public static long deadlineMillis() {
        return TestTimeouts.scaled(CALL_DEADLINE).toMillis();
    }

    public void createItem(String tenant, String item, long total) {
        blocking().createItem(CreateItemRequest.newBuilder().setTenantId(tenant).setItemId(item).setTotal(total)
                .setHomeRegion("local").build());
    }

    @Override
    public void close() {
        if (channel != null) {
            try {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (node != null && clock != null) {
            node.close(); // built here, not by the context
        }
        if (ctx != null) {
            ctx.close();
        }
    }
}
