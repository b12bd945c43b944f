package io.lastunit.bench.jmh;

import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.IterationParams;

/**
 * Reservations per second end to end: client → gRPC → router (authentication, validation,
 * shedding checks, routing) → gRPC → shard node → lane engine → PostgreSQL, and back. The same
 * scenarios as {@link LaneEngineBench}, so the difference between the two is the cost of the
 * network path.
 *
 * <p>Setup (per trial): a {@link BenchPlatform} (in-process ZooKeeper, cell {@code shared} with 2
 * shard nodes in region {@code local}, each on a fresh database, one router with its buyer-rate
 * and in-flight limits raised out of the way) and {@code items} items of {@link BenchItems#TOTAL}
 * units created through the router. Each call is a one-unit Reserve, on one channel shared by all
 * JMH threads, with the bearer token, a key and buyer never used before ({@link Caller}) and item 0
 * ({@code items=1}: the hot item, on one shard) or a uniformly random one of 1,000 (spread over
 * both shards); the run fails unless the answer is RESERVED. Concurrent callers are the JMH
 * threads, each blocked on its call (the blocking stub): pass {@code -t 64} or {@code -t 256}; or
 * threads that keep several calls in flight each through the future stub ({@link Pipeline}):
 * {@code -t 4 -p pipeline=64} is 256 in flight, the way an asynchronous service calls lastunit.
 *
 * <p>Everything — clients, router, shard nodes, ZooKeeper — shares this JVM and the machine's
 * cores with PostgreSQL, so on a small machine this measures CPU as much as the design; read it
 * beside {@link LaneEngineBench} run on the same machine. Every item has {@code buckets} escrow
 * buckets (1, 4, 16), as in {@link LaneEngineBench}.
 *
 * <p>{@code database}: the server of {@code LASTUNIT_BENCH_JDBC_URL} ("server", the default), or a
 * primary with a synchronous standby started for the trial that both shards' databases are on,
 * their commits waiting for the standby ("pair-sync") or not ("pair-local"): {@link BenchServer}.
 *
 * <p>After each iteration it prints that iteration's lane counters ({@link LaneWindow}): operations
 * per commit, decision-to-commit time, JVM CPU per Reserve and Reserves per router → shard call.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'EndToEndBench' -p items=1 -wi 1 -w 3s -i 1 -r 5s -f 1 -t 64
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class EndToEndBench {

    /** Distinct items called: 1 = one hot item; 1000 = calls spread uniformly. */
    @Param({"1", "1000"})
    public int items;

    /** Escrow buckets per item. */
    @Param({"1", "4", "16"})
    public int buckets;

    /** Every node's metrics: "on" (the default of every service) or "off", to measure what they cost. */
    @Param({"on"})
    public String metrics;

    /** Where the shards' databases are: "server", "pair-sync" or "pair-local" ({@link BenchServer}). */
    @Param({BenchServer.SERVER})
    public String database;

    private BenchServer server;
    private BenchPlatform platform;
    private RouterClient client;
    private String[] itemIds;
    private final LaneWindow window = new LaneWindow();

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        try {
            server = BenchServer.start(database);
            if (!metrics.equals("on") && !metrics.equals("off")) {
                throw new IllegalArgumentException("metrics=" + metrics + " must be on or off");
            }
            platform = BenchPlatform.start(server, "e2e_" + items + "_" + buckets, Map.of(), metrics.equals("on"));
            client = platform.client();
            itemIds = BenchItems.itemIds(items);
            platform.createItems(items, BenchItems.TOTAL, buckets);
        } catch (Exception | Error e) {
            tearDown();
            throw e;
        }
    }

    @Setup(Level.Iteration)
    public void beginIteration() {
        window.begin(platform.engines(), platform.platform().router().reserveBatches());
    }

    /** Prints the lanes' counters of this iteration alone ({@link LaneWindow}). */
    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        window.end(platform.engines(), platform.platform().router().reserveBatches(), iteration);
        server.printReplication(iteration.getType().name().toLowerCase(Locale.ROOT));
    }

    @Benchmark
    public ReserveResponse reserve(Caller caller, Pipeline pipeline) {
        ReserveRequest.Builder request = ReserveRequest.newBuilder()
                .setTenantId(BenchItems.TENANT)
                .setItemId(itemIds[Caller.pickItem(items)])
                .setQuantity(1)
                .setIdempotencyKey(caller.next().key())
                .setBuyerId(caller.buyer())
                .setRegion(BenchItems.REGION);
        if (pipeline.pipeline == 1) {
            // A blocked caller uses the blocking stub, as it did before pipelines: the call runs
            // on this thread, with no future and no hand-off to wait on.
            return Pipeline.reserved(client.inventory().reserve(request.build()));
        }
        return pipeline.call(() -> client.inventoryAsync().reserve(request.build()));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        try {
            if (platform != null) {
                try {
                    System.out.printf("%n[EndToEndBench items=%d]%n%s%n", items, platform.report());
                } finally {
                    platform.close();
                }
            }
        } finally {
            platform = null;
            client = null;
            if (server != null) {
                server.close();
                server = null;
            }
        }
    }
}
