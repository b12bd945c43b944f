package io.lastunit.bench.jmh;

import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The sold-out path: SOLD_OUT answers per second through the router once an item is gone,
 * beside the transport's own ceiling.
 *
 * <p>Setup (per trial): a {@link BenchPlatform} whose router caches a SOLD_OUT for an hour
 * ({@code sold-out-ttl-ms} = 3,600,000, so the cache never expires during a run) and one item of
 * one unit, reserved once (RESERVED) and then asked again (SOLD_OUT from the shard, which fills
 * the router's cache).
 *
 * <ul>
 *   <li>{@link #soldOut}: a blocking Reserve of that item with a key and buyer never used before
 *       ({@link Caller}); the run fails unless the answer is SOLD_OUT. The router authenticates,
 *       validates, and answers from its sold-out cache without calling a shard: the flash sale's
 *       common case once stock is gone. Teardown prints the router's shed count and the shards'
 *       call counts, which show that the shards were not called.</li>
 *   <li>{@link #noop}: the router's gRPC {@code grpc.health.v1.Health/Check} — same Netty server,
 *       same direct executor, same channel, same bearer header, no work. The transport's ceiling
 *       here: how close {@link #soldOut} gets to it is how cheap the router's "no" is.</li>
 * </ul>
 * Both from JMH threads on one shared channel: pass {@code -t 64} (or 256).
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'SoldOutBench' -wi 1 -w 3s -i 1 -r 5s -f 1 -t 64
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SoldOutBench {
    static final String ITEM = BenchItems.itemId(0);

    private BenchPlatform platform;
    private RouterClient client;
    private long shedBefore;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        platform = BenchPlatform.start("soldout", Map.of("lastunit.router.sold-out-ttl-ms", 3_600_000L));
        try {
            client = platform.client();
            platform.createItems(1, 1);
            ReserveOutcome first = reserve("setup-key-1", "setup-buyer-1").getOutcome();
            ReserveOutcome second = reserve("setup-key-2", "setup-buyer-2").getOutcome();
            if (first != ReserveOutcome.RESERVED || second != ReserveOutcome.SOLD_OUT) {
                throw new IllegalStateException("could not sell the item out: " + first + ", then " + second);
            }
            shedBefore = platform.platform().router().shedCount();
        } catch (Exception | Error e) {
            tearDown();
            throw e;
        }
    }

    private ReserveResponse reserve(String key, String buyer) {
        return client.inventory().reserve(ReserveRequest.newBuilder()
                .setTenantId(BenchItems.TENANT)
                .setItemId(ITEM)
                .setQuantity(1)
                .setIdempotencyKey(key)
                .setBuyerId(buyer)
                .setRegion(BenchItems.REGION)
                .build());
    }

    @Benchmark
    public ReserveResponse soldOut(Caller caller) {
        caller.next();
        ReserveResponse r = reserve(caller.key(), caller.buyer());
        if (r.getOutcome() != ReserveOutcome.SOLD_OUT) {
            throw new IllegalStateException("expected SOLD_OUT, got " + r.getOutcome());
        }
        return r;
    }

    @Benchmark
    public HealthCheckResponse noop() {
        return client.health().check(HealthCheckRequest.getDefaultInstance());
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        if (platform == null) {
            return;
        }
        try {
            System.out.printf("%n[SoldOutBench] answered by the router's cache since setup: %d%n%s%n",
                    platform.platform().router().shedCount() - shedBefore, platform.report());
        } finally {
            platform.close();
            platform = null;
            client = null;
        }
    }
}
