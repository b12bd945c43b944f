package io.lastunit.admin.demo;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.rpc.RetryInfo;
import io.grpc.Channel;
import io.grpc.Status;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A flash sale through the router: each buyer reserves one unit of a random item of a random
 * tenant (its own idempotency key per item, its own buyer id) and confirms the hold. A buyer whose
 * item is sold out tries the items not yet seen sold out, so the sale sells min(units, buyers)
 * exactly however the random picks fall. RESOURCE_EXHAUSTED and UNAVAILABLE are retried with the
 * SAME request — the same idempotency key, so a retry can never take a second unit — after the
 * server's RetryInfo delay or an exponential backoff, at most {@link #ATTEMPTS_MAX} times.
 *
 * <p>Runs once; not thread-safe itself (one driver thread), its callbacks are.
 */
public final class FlashSale {
    static final int ATTEMPTS_MAX = 20;
    static final long DEADLINE_MS = 10_000;
    static final int ERROR_SAMPLES_MAX = 5;

    /** How the sale went. */
    public record Result(long buyers, long reserved, long confirmed, long soldOut, long errors, long retries,
            long fallbacks, long elapsedNanos, List<String> errorSamples) {
        public double seconds() {
            return elapsedNanos / 1e9;
        }
    }

    private final Channel router;
    private final Catalog catalog;
    private final int buyers;
    private final int concurrency;
    private final long seed;
    private final String region;
    private final String runTag;
    private final PrintWriter out;
    private final boolean liveProgress;

    private final AtomicIntegerArray soldOutSeen;
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong reserved = new AtomicLong();
    private final AtomicLong confirmed = new AtomicLong();
    private final AtomicLong soldOut = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();
    private final AtomicLong fallbacks = new AtomicLong();
    private final List<String> errorSamples = Collections.synchronizedList(new ArrayList<>());
    private ScheduledExecutorService timers;

    /**
     * @param router       a channel to the router that already carries the bearer token
     * @param liveProgress redraw the progress bar in place (a terminal) rather than once a second
     */
    public FlashSale(Channel router, Catalog catalog, int buyers, int concurrency, long seed, String region,
            String runTag, PrintWriter out, boolean liveProgress) {
        this.router = router;
        this.catalog = catalog;
        this.buyers = buyers;
        this.concurrency = concurrency;
        this.seed = seed;
        this.region = region;
        this.runTag = runTag;
        this.out = out;
        this.liveProgress = liveProgress;
        this.soldOutSeen = new AtomicIntegerArray(catalog.items().size());
    }

    public Result run() throws InterruptedException {
        timers = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "flash-sale-timer");
            t.setDaemon(true);
            return t;
        });
        SplittableRandom random = new SplittableRandom(seed);
        Semaphore inFlight = new Semaphore(concurrency);
        long start = System.nanoTime();
        timers.scheduleAtFixedRate(() -> progress(start, false), liveProgress ? 0 : 1_000,
                liveProgress ? 200 : 1_000, TimeUnit.MILLISECONDS);
        try {
            for (int i = 0; i < buyers; i++) {
                String tenant = catalog.tenants().get(random.nextInt(catalog.tenants().size()));
                List<Catalog.Item> own = catalog.itemsOf(tenant);
                Catalog.Item first = own.get(random.nextInt(own.size()));
                inFlight.acquire();
                String buyer = "buyer-" + i;
                buy(buyer, first).whenComplete((v, err) -> {
                    if (err != null) {
                        errors.incrementAndGet();
                        sample(buyer + ": " + describe(err));
                    }
                    done.incrementAndGet();
                    inFlight.release();
                });
            }
            inFlight.acquire(concurrency);
            long elapsed = System.nanoTime() - start;
            progress(start, true);
            if (liveProgress) {
                out.println();
            }
            out.flush();
            return new Result(buyers, reserved.get(), confirmed.get(), soldOut.get(), errors.get(), retries.get(),
                    fallbacks.get(), elapsed, List.copyOf(errorSamples));
        } finally {
            timers.shutdownNow();
        }
    }

    /** Reserve {@code item} for {@code buyer}; on SOLD_OUT move on to the next item not seen sold out. */
    private CompletableFuture<Void> buy(String buyer, Catalog.Item item) {
        var stub = InventoryServiceGrpc.newFutureStub(router);
        ReserveRequest req = ReserveRequest.newBuilder().setTenantId(item.tenant()).setItemId(item.itemId())
                .setQuantity(1).setIdempotencyKey(runTag + "-" + buyer + "-" + item.index()).setBuyerId(buyer)
                .setRegion(region).build();
        return withRetry(() -> stub.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).reserve(req), 1)
                .thenCompose(resp -> onReserved(buyer, item, resp));
    }

    private CompletableFuture<Void> onReserved(String buyer, Catalog.Item item, ReserveResponse resp) {
        if (resp.getOutcome() == ReserveOutcome.RESERVED) {
            reserved.incrementAndGet();
            var stub = InventoryServiceGrpc.newFutureStub(router);
            ConfirmRequest c = ConfirmRequest.newBuilder().setHoldId(resp.getHold().getHoldId())
                    .setOrderRef("order-" + runTag + "-" + buyer).build();
            return withRetry(() -> stub.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).confirm(c), 1)
                    .thenAccept(x -> confirmed.incrementAndGet());
        }
        if (resp.getOutcome() != ReserveOutcome.SOLD_OUT) {
            return CompletableFuture.failedFuture(new IllegalStateException("Reserve of " + item.tenant() + "/"
                    + item.itemId() + " answered " + resp.getOutcome()));
        }
        // Nothing in the demo gives units back (every hold is confirmed), so SOLD_OUT is final.
        soldOutSeen.set(item.index(), 1);
        Catalog.Item next = nextNotSoldOut(item.index());
        if (next == null) {
            soldOut.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }
        fallbacks.incrementAndGet();
        return buy(buyer, next);
    }

    private Catalog.Item nextNotSoldOut(int from) {
        int n = catalog.items().size();
        for (int k = 1; k <= n; k++) {
            int j = (from + k) % n;
            if (soldOutSeen.get(j) == 0) {
                return catalog.items().get(j);
            }
        }
        return null;
    }

    private <T> CompletableFuture<T> withRetry(Supplier<ListenableFuture<T>> call, int attempt) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Futures.addCallback(call.get(), new FutureCallback<T>() {
            @Override
            public void onSuccess(T value) {
                result.complete(value);
            }

            @Override
            public void onFailure(Throwable t) {
                Status.Code code = Status.fromThrowable(t).getCode();
                boolean retryable = code == Status.Code.RESOURCE_EXHAUSTED || code == Status.Code.UNAVAILABLE;
                if (!retryable || attempt >= ATTEMPTS_MAX) {
                    result.completeExceptionally(t);
                    return;
                }
                retries.incrementAndGet();
                long delay = Math.max(retryAfterMs(t), Math.min(1_000, 10L << Math.min(attempt, 7)));
                timers.schedule(() -> withRetry(call, attempt + 1).whenComplete((v, e) -> {
                    if (e != null) {
                        result.completeExceptionally(e);
                    } else {
                        result.complete(v);
                    }
                }), delay, TimeUnit.MILLISECONDS);
            }
        }, MoreExecutors.directExecutor());
        return result;
    }

    /** The server's RetryInfo delay, or 0. */
    static long retryAfterMs(Throwable t) {
        return io.lastunit.common.GrpcErrors.retryAfterMs(t);
    }

    static String describe(Throwable t) {
        Throwable c = t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
        Status st = Status.fromThrowable(c);
        if (st.getCode() == Status.Code.UNKNOWN && !(c instanceof io.grpc.StatusRuntimeException)) {
            return String.valueOf(c.getMessage());
        }
        return st.getCode() + (st.getDescription() == null ? "" : ": " + st.getDescription());
    }

    private void sample(String s) {
        synchronized (errorSamples) {
            if (errorSamples.size() < ERROR_SAMPLES_MAX) {
                errorSamples.add(s);
            }
        }
    }

    private void progress(long startNanos, boolean last) {
        long d = done.get();
        int width = 40;
        int filled = (int) (width * d / Math.max(1, buyers));
        double secs = Math.max(1e-9, (System.nanoTime() - startNanos) / 1e9);
        String bar = String.format("[%s%s] %,d/%,d buyers  reserved=%,d sold_out=%,d errors=%,d  %,.0f buyers/s",
                "#".repeat(filled), ".".repeat(width - filled), d, buyers, reserved.get(), soldOut.get(), errors.get(),
                d / secs);
        synchronized (out) {
            if (liveProgress) {
                out.print("\r" + bar + "   ");
            } else if (!last || d > 0) {
                out.println(bar);
            }
            out.flush();
        }
    }
}
