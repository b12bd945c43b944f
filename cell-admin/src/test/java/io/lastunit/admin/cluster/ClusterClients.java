package io.lastunit.admin.cluster;

import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.topology.Topology;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.shard.ShardConfig;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * What the cluster tests need to reach a {@link LocalPlatform} from outside, as a client would:
 * one PostgreSQL database per shard (remembered, so a test can read a shard's rows directly),
 * plaintext channels to the router and to single shard nodes (closed together), and bearer-token
 * interceptors. Thread-safe; close it after the platform's clients are done.
 */
final class ClusterClients implements AutoCloseable {
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final PostgresFixture pg;
    private final Map<String, String> jdbcUrlByShard = new ConcurrentHashMap<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    ClusterClients(PostgresFixture pg) {
        this.pg = pg;
    }

    /** Gives each shard a fresh database named after it, and remembers its URL. */
    LocalPlatform.ShardDatabases databases() {
        return shardId -> {
            String url = jdbcUrlByShard.computeIfAbsent(shardId, pg::newDatabase);
            return new ShardConfig.Jdbc(url, pg.user(), pg.password(), 0);
        };
    }

    /** A new connection (autocommit on) to the shard's own database. */
    Connection connect(String shardId) throws SQLException {
        String url = jdbcUrlByShard.get(shardId);
        if (url == null) {
            throw new IllegalArgumentException("no database was made for shard " + shardId
                    + "; known: " + jdbcUrlByShard.keySet());
        }
        return DriverManager.getConnection(url, pg.user(), pg.password());
    }

    synchronized ManagedChannel channel(String host, int port) {
        ManagedChannel ch = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
        channels.add(ch);
        return ch;
    }

    ManagedChannel routerChannel(LocalPlatform platform) {
        return channel("127.0.0.1", platform.routerPort());
    }

    /** A channel straight to one shard node, bypassing the router (shards take no token). */
    ManagedChannel shardChannel(ShardInfo shard) {
        String a = shard.getAddress();
        return channel(a.substring(0, a.lastIndexOf(':')), Integer.parseInt(a.substring(a.lastIndexOf(':') + 1)));
    }

    ShardServiceGrpc.ShardServiceBlockingStub shardService(ShardInfo shard) {
        return ShardServiceGrpc.newBlockingStub(shardChannel(shard));
    }

    static InventoryServiceGrpc.InventoryServiceBlockingStub blocking(ManagedChannel ch, String token) {
        var stub = InventoryServiceGrpc.newBlockingStub(ch);
        return token == null ? stub : stub.withInterceptors(bearer(token));
    }

    static InventoryServiceGrpc.InventoryServiceStub async(ManagedChannel ch, String token) {
        var stub = InventoryServiceGrpc.newStub(ch);
        return token == null ? stub : stub.withInterceptors(bearer(token));
    }

    static io.lastunit.api.admin.v1.AdminServiceGrpc.AdminServiceBlockingStub adminService(ManagedChannel ch,
            String token) {
        var stub = io.lastunit.api.admin.v1.AdminServiceGrpc.newBlockingStub(ch);
        return token == null ? stub : stub.withInterceptors(bearer(token));
    }

    ManagedChannel adminChannel(LocalPlatform platform) {
        return channel("127.0.0.1", platform.adminPort());
    }

    /** Sends {@code authorization: Bearer <token>} on every call. */
    static ClientInterceptor bearer(String token) {
        return header("Bearer " + token);
    }

    /** Sends this exact {@code authorization} value (for malformed-credential cases). */
    static ClientInterceptor header(String authorization) {
        Metadata md = new Metadata();
        md.put(AUTHORIZATION, authorization);
        return MetadataUtils.newAttachHeadersInterceptor(md);
    }

    /** A router token grant for {@code token}: {@code <sha256-hex>:<name>:<tenants>[:admin]}. */
    static String grant(String token, String name, String tenants, boolean admin) {
        return Authenticator.sha256Hex(token) + ":" + name + ":" + tenants + (admin ? ":admin" : "");
    }

    static Status.Code code(Throwable t) {
        return Status.fromThrowable(t).getCode();
    }

    /** The ErrorInfo reason of a failed call, or "" when it carries none. */
    static String reason(Throwable t) {
        return GrpcErrors.errorInfo(t).map(i -> i.getReason()).orElse("");
    }

    /**
     * Item ids of {@code tenant} chosen so that placement gives exactly {@code perShard} of them to
     * each shard of {@code cell} in region "local"; each with {@code total} units.
     */
    static List<Sale.Item> itemsOnEveryShard(Topology topology, String cell, String tenant, int perShard, long total) {
        Map<String, Integer> owned = new HashMap<>();
        List<ShardInfo> shards = topology.shards(cell, "local");
        List<Sale.Item> items = new ArrayList<>();
        for (int i = 0; items.size() < perShard * shards.size(); i++) {
            if (i > 10_000) {
                throw new IllegalStateException("placement never reached some shard of " + cell + ": " + owned);
            }
            String id = "item-" + i;
            String owner = topology.shardFor(tenant, id, "local").orElseThrow().getShardId();
            if (owned.merge(owner, 1, Integer::sum) <= perShard) {
                items.add(new Sale.Item(tenant, id, total));
            }
        }
        return items;
    }

    /**
     * CreateItem through the router, again (it is idempotent) while a shard's topology lags the
     * router's, for at most 30 s (scaled) rather than a count of attempts, so a slow host gets as
     * long as it needs to catch up.
     */
    static void createItem(InventoryServiceGrpc.InventoryServiceBlockingStub admin, CreateItemRequest r)
            throws InterruptedException {
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(30)).toNanos();
        while (true) {
            try {
                admin.withDeadlineAfter(callDeadlineMillis(), TimeUnit.MILLISECONDS).createItem(r);
                return;
            } catch (RuntimeException e) {
                Status.Code code = ClusterClients.code(e);
                if (System.nanoTime() > deadline || (code != Status.Code.ABORTED && code != Status.Code.UNAVAILABLE)) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /** How long one call of a cluster test may take: 10 s, scaled for slow machines. */
    static long callDeadlineMillis() {
        return TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis();
    }

    static void awaitUntil(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(30)).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(20);
        }
    }

    /**
     * Closes the channels, then waits (bounded) until no backend is left on the shard databases.
     * Call it after the platform has closed. Why: PostgresFixture drops the databases WITH (FORCE),
     * which a non-superuser cannot do while an autovacuum worker (started by the sale's writes) is
     * on one of them ("must be a member of the role whose process is being terminated").
     */
    @Override
    public synchronized void close() throws InterruptedException {
        for (ManagedChannel ch : channels) {
            ch.shutdownNow();
        }
        for (ManagedChannel ch : channels) {
            ch.awaitTermination(5, TimeUnit.SECONDS);
        }
        channels.clear();
        awaitNoBackendsOnShardDatabases(TestTimeouts.scaled(Duration.ofSeconds(20)));
    }

    private void awaitNoBackendsOnShardDatabases(Duration max) throws InterruptedException {
        if (jdbcUrlByShard.isEmpty()) {
            return;
        }
        String[] names = jdbcUrlByShard.values().stream()
                .map(u -> u.substring(u.lastIndexOf('/') + 1).replaceAll("\\?.*$", "")).toArray(String[]::new);
        long deadline = System.nanoTime() + max.toNanos();
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), pg.user(), pg.password());
             var ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE datname = ANY(?)")) {
            ps.setArray(1, c.createArrayOf("text", names));
            while (System.nanoTime() < deadline) {
                try (var rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getLong(1) == 0) {
                        return;
                    }
                }
                Thread.sleep(100);
            }
        } catch (SQLException e) {
            // only a wait: the fixture reports what it cannot drop
        }
    }
}
