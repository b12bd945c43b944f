package io.lastunit.shard.demo;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.shard.v1.Drift;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.shard.ShardNode;
import io.micronaut.context.ApplicationContext;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./lastunit demo}: starts a shard node on this machine (on an embedded PostgreSQL
 * unless a JDBC URL is given), then runs a flash sale against it over gRPC — every buyer
 * reserves one unit and confirms it — with a progress bar, and ends with a summary whose
 * last lines are machine-readable: {@code sold=<n> total=<n>} and {@code invariant=OK} (or
 * the drift). Exit code 0 only when the sale sold exactly min(units, buyers) and every
 * invariant holds.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run a flash sale over gRPC against a local shard node and check the invariants.")
public final class FlashSaleDemo implements Callable<Integer> {
    @Option(names = "--units", description = "Units for sale (default ${DEFAULT-VALUE}).")
    long units = 100;

    @Option(names = "--buyers", description = "Buyers, each reserving one unit (default ${DEFAULT-VALUE}).")
    int buyers = 10_000;

    @Option(names = "--concurrency", description = "Requests in flight at once (default ${DEFAULT-VALUE}).")
    int concurrency = 256;

    @Option(names = "--jdbc-url", description = "PostgreSQL to use (default: an embedded one). "
            + "Also LASTUNIT_SHARD_JDBC_URL.")
    String jdbcUrl = System.getenv().getOrDefault("LASTUNIT_SHARD_JDBC_URL", "");

    @Option(names = "--jdbc-user", description = "Default ${DEFAULT-VALUE}.")
    String jdbcUser = System.getenv().getOrDefault("LASTUNIT_SHARD_JDBC_USER", "lastunit");

    @Option(names = "--jdbc-password", description = "Default: lastunit.")
    String jdbcPassword = System.getenv().getOrDefault("LASTUNIT_SHARD_JDBC_PASSWORD", "lastunit");

    private final PrintStream out = System.out;

    @Override
    public Integer call() throws Exception {
        if (units < 0 || buyers < 1 || concurrency < 1 || concurrency > 10_000) {
            out.println("error: need --units >= 0, --buyers >= 1, --concurrency in [1, 10000]");
            return 2;
        }
        out.println("lastunit demo: " + buyers + " buyers, " + units + " units, " + concurrency + " in flight");
        out.println(jdbcUrl.isBlank() ? "starting an embedded PostgreSQL and a shard node ..."
                : "starting a shard node on " + jdbcUrl + " ...");
        Map<String, Object> props = new HashMap<>();
        props.put("lastunit.shard.id", "demo");
        props.put("lastunit.shard.port", 0);
        props.put("lastunit.shard.jdbc-url", jdbcUrl);
        props.put("lastunit.shard.jdbc-user", jdbcUser);
        props.put("lastunit.shard.jdbc-password", jdbcPassword);
        try (ApplicationContext ctx = ApplicationContext.run(props)) {
            ShardNode node = ctx.getBean(ShardNode.class).start();
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", node.port()).usePlaintext().build();
            try {
                return sale(channel);
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private int sale(ManagedChannel channel) throws InterruptedException {
        var stub = InventoryServiceGrpc.newFutureStub(channel);
        var blocking = InventoryServiceGrpc.newBlockingStub(channel);
        String item = "flash-" + System.currentTimeMillis();
        blocking.createItem(CreateItemRequest.newBuilder().setTenantId("demo").setItemId(item).setTotal(units)
                .setHomeRegion("local").build());

        AtomicLong done = new AtomicLong();
        AtomicLong reserved = new AtomicLong();
        AtomicLong soldOut = new AtomicLong();
        AtomicLong confirmed = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        Semaphore inFlight = new Semaphore(concurrency);
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
        long start = System.nanoTime();
        ticker.scheduleAtFixedRate(() -> progress(done.get(), reserved.get(), soldOut.get(), errors.get(), start),
                0, 200, TimeUnit.MILLISECONDS);
        for (int i = 0; i < buyers; i++) {
            inFlight.acquire();
            String buyer = "buyer-" + i;
            ReserveRequest req = ReserveRequest.newBuilder().setTenantId("demo").setItemId(item).setQuantity(1)
                    .setIdempotencyKey(item + "-" + buyer).setBuyerId(buyer).setRegion("local").build();
            reserveWithRetry(stub, req, 0).thenCompose(resp -> {
                if (resp.getOutcome() == ReserveOutcome.RESERVED) {
                    reserved.incrementAndGet();
                    return toCompletable(stub.confirm(ConfirmRequest.newBuilder()
                            .setHoldId(resp.getHold().getHoldId()).setOrderRef("order-" + buyer).build()))
                            .thenAccept(c -> confirmed.incrementAndGet());
                }
                soldOut.incrementAndGet();
                return CompletableFuture.completedFuture(null);
            }).whenComplete((v, err) -> {
                if (err != null) {
                    errors.incrementAndGet();
                }
                done.incrementAndGet();
                inFlight.release();
            });
        }
        inFlight.acquire(concurrency);
        long elapsedNanos = System.nanoTime() - start;
        ticker.shutdownNow();
        progress(done.get(), reserved.get(), soldOut.get(), errors.get(), start);
        out.println();

        Stock stock = blocking.getStock(GetStockRequest.newBuilder().setTenantId("demo").setItemId(item).build())
                .getStock();
        InvariantReport report = ShardServiceGrpc.newBlockingStub(channel)
                .checkInvariants(CheckInvariantsRequest.getDefaultInstance());
        double seconds = elapsedNanos / 1e9;
        out.println();
        out.printf("flash sale of %s: %d buyers in %.2f s%n", item, buyers, seconds);
        out.printf("  reserved      %,d%n  confirmed     %,d%n  sold out      %,d%n  errors        %,d%n",
                reserved.get(), confirmed.get(), soldOut.get(), errors.get());
        out.printf("  requests/s    %,.0f (reserve + confirm over the sale)%n",
                (buyers + confirmed.get()) / seconds);
        out.printf("  stock         total=%d available=%d held=%d sold=%d%n", stock.getTotal(), stock.getAvailable(),
                stock.getHeld(), stock.getSold());
        out.println("sold=" + stock.getSold() + " total=" + stock.getTotal());
        if (report.getOk()) {
            out.println("invariant=OK");
        } else {
            StringBuilder sb = new StringBuilder("invariant=DRIFT");
            for (Drift d : report.getDriftsList()) {
                sb.append(' ').append(d.getKind()).append(':').append(d.getTenantId()).append('/').append(d.getItemId())
                        .append('#').append(d.getBucketNo()).append(" expected=").append(d.getExpected())
                        .append(" actual=").append(d.getActual());
            }
            out.println(sb);
        }
        boolean exact = stock.getSold() == Math.min(units, (long) buyers) && errors.get() == 0;
        return report.getOk() && exact ? 0 : 1;
    }

    private CompletableFuture<ReserveResponse> reserveWithRetry(InventoryServiceGrpc.InventoryServiceFutureStub stub,
                                                                ReserveRequest req, int attempt) {
        return toCompletable(stub.reserve(req)).handle((resp, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(resp);
            }
            Status.Code code = Status.fromThrowable(err).getCode();
            boolean retryable = code == Status.Code.UNAVAILABLE || code == Status.Code.RESOURCE_EXHAUSTED;
            if (!retryable || attempt >= 20) {
                return CompletableFuture.<ReserveResponse>failedFuture(err);
            }
            // Same idempotency key: a retry can never take a second unit.
            return CompletableFuture.supplyAsync(() -> null,
                            CompletableFuture.delayedExecutor(20L << Math.min(attempt, 4), TimeUnit.MILLISECONDS))
                    .thenCompose(x -> reserveWithRetry(stub, req, attempt + 1));
        }).thenCompose(f -> f);
    }

    private static <T> CompletableFuture<T> toCompletable(com.google.common.util.concurrent.ListenableFuture<T> lf) {
        CompletableFuture<T> f = new CompletableFuture<>();
        lf.addListener(() -> {
            try {
                f.complete(lf.get());
            } catch (java.util.concurrent.ExecutionException e) {
                f.completeExceptionally(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                f.completeExceptionally(e);
            } catch (StatusRuntimeException e) {
                f.completeExceptionally(e);
            }
        }, Runnable::run);
        return f;
    }

    private void progress(long done, long reserved, long soldOut, long errors, long startNanos) {
        int width = 40;
        int filled = (int) (width * done / Math.max(1, buyers));
        double secs = Math.max(1e-9, (System.nanoTime() - startNanos) / 1e9);
        out.printf("\r[%s%s] %,d/%,d buyers  reserved=%,d sold_out=%,d errors=%,d  %,.0f/s   ",
                "#".repeat(filled), ".".repeat(width - filled), done, buyers, reserved, soldOut, errors, done / secs);
        out.flush();
    }
}
