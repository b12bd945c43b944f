package io.lastunit.admin.demo;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Channel;
import io.grpc.Status;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.SeatMode;
import io.lastunit.api.inventory.v1.SeatSelection;
import io.lastunit.common.GrpcErrors;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;

/**
 * A seat sale through the router ({@code demo --seats}): each buyer asks for ADJACENT k seats in
 * one row of a SEATED item, k uniform in 1..{@code adjacentMax} (at most {@link #ADJACENT_MAX}), with its own idempotency key and
 * buyer id. A buyer that gets a hold confirms it ({@link #CONFIRM_PERCENT}%), releases it
 * ({@link #RELEASE_PERCENT}%) or keeps it held (the rest), so the final map shows sold, held and
 * free seats. Half the releases are made at once (the seats go back on sale and later buyers take
 * them again), half once the last buyer has asked (the cart abandoned at closing: those seats are
 * free on the final map). SOLD_OUT (no k adjacent free seats anywhere) is a buyer's last answer.
 * RESOURCE_EXHAUSTED and UNAVAILABLE are retried with the SAME request — the same idempotency
 * key, so a retry can never take a second set of seats — after the server's RetryInfo delay or an
 * exponential backoff, at most {@link #ATTEMPTS_MAX} times.
 *
 * <p>Every hold is recorded as the buyer saw it (seats, what became of it, when), so that
 * {@link SeatAudit} can check the answers themselves: no seat in two live holds, every hold k
 * adjacent seats, and the final map exactly what the buyers did.
 *
 * <p>Runs once; not thread-safe itself (one driver thread), its callbacks are.
 */
public final class SeatSale {
    public static final int ADJACENT_MAX = 6;
    public static final int CONFIRM_PERCENT = 70;
    public static final int RELEASE_PERCENT = 10;
    static final int ATTEMPTS_MAX = 20;
    static final long DEADLINE_MS = 10_000;
    static final int ERROR_SAMPLES_MAX = 5;

    /** What a buyer meant to do with its hold: RELEASE at once, RELEASE_LATE once the last buyer has asked. */
    public enum Plan { CONFIRM, RELEASE, RELEASE_LATE, KEEP }

    /** What became of a hold, as its buyer knows it: UNKNOWN when the Confirm or Release call failed. */
    public enum Fate { SOLD, RELEASED, HELD, UNKNOWN }

    /**
     * One hold a buyer got: {@code reservedAt} when the RESERVED answer arrived, {@code releaseSentAt}
     * when its Release was first sent ({@link Long#MAX_VALUE} if never), both {@link System#nanoTime()}.
     */
    public record Hold(String buyer, int asked, String holdId, List<String> seats, Plan plan, Fate fate,
            long reservedAt, long releaseSentAt) {
        public Hold {
            seats = List.copyOf(seats);
        }
    }

    /** How the sale went; {@code holds} in buyer order. */
    public record Result(long buyers, long seatsAsked, long soldOut, long errors, long retries, long elapsedNanos,
            List<Hold> holds, List<String> errorSamples) {
        public Result {
            holds = List.copyOf(holds);
            errorSamples = List.copyOf(errorSamples);
        }

        public double seconds() {
            return elapsedNanos / 1e9;
        }

        public long holdsWith(Fate fate) {
            return holds.stream().filter(h -> h.fate() == fate).count();
        }

        public long seatsWith(Fate fate) {
            return holds.stream().filter(h -> h.fate() == fate).mapToLong(h -> h.seats().size()).sum();
        }
    }

    private final Channel router;
    private final String tenant;
    private final String itemId;
    private final int buyers;
    private final int adjacentMax;
    private final int concurrency;
    private final long seed;
    private final String region;
    private final String runTag;
    private final PrintWriter out;
    private final boolean liveProgress;

    private final AtomicReferenceArray<Hold> holds;
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong held = new AtomicLong();
    private final AtomicLong seatsAsked = new AtomicLong();
    private final AtomicLong soldOut = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();
    private final List<String> errorSamples = Collections.synchronizedList(new ArrayList<>());
    private ScheduledExecutorService timers;

    /**
     * @param router       a channel to the router that already carries the bearer token
     * @param liveProgress redraw the progress bar in place (a terminal) rather than once a second
     */
    public SeatSale(Channel router, String tenant, String itemId, int buyers, int adjacentMax, int concurrency,
            long seed, String region, String runTag, PrintWriter out, boolean liveProgress) {
        if (adjacentMax < 1 || adjacentMax > ADJACENT_MAX) {
            throw new IllegalArgumentException("adjacentMax " + adjacentMax + " is outside [1, " + ADJACENT_MAX + "]");
        }
        this.router = router;
        this.tenant = tenant;
        this.itemId = itemId;
        this.buyers = buyers;
        this.adjacentMax = adjacentMax;
        this.concurrency = concurrency;
        this.seed = seed;
        this.region = region;
        this.runTag = runTag;
        this.out = out;
        this.liveProgress = liveProgress;
        this.holds = new AtomicReferenceArray<>(buyers);
    }

    public Result run() throws InterruptedException {
        timers = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "seat-sale-timer");
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
                int k = 1 + random.nextInt(adjacentMax);
                int roll = random.nextInt(100);
                Plan plan = roll < CONFIRM_PERCENT ? Plan.CONFIRM
                        : roll < CONFIRM_PERCENT + RELEASE_PERCENT / 2 ? Plan.RELEASE
                        : roll < CONFIRM_PERCENT + RELEASE_PERCENT ? Plan.RELEASE_LATE : Plan.KEEP;
                inFlight.acquire();
                int slot = i;
                String buyer = "buyer-" + i;
                seatsAsked.addAndGet(k);
                buy(slot, buyer, k, plan).whenComplete((v, err) -> {
                    if (err != null) {
                        errors.incrementAndGet();
                        sample(buyer + ": " + FlashSale.describe(err));
                    }
                    done.incrementAndGet();
                    inFlight.release();
                });
            }
            inFlight.acquire(concurrency);
            // Closing: the late releases, as many in flight as buyers were.
            inFlight.release(concurrency);
            for (int i = 0; i < buyers; i++) {
                Hold h = holds.get(i);
                if (h != null && h.plan() == Plan.RELEASE_LATE) {
                    inFlight.acquire();
                    release(i, h).whenComplete((v, err) -> {
                        if (err != null) {
                            errors.incrementAndGet();
                            sample(h.buyer() + ": Release at closing: " + FlashSale.describe(err));
                        }
                        inFlight.release();
                    });
                }
            }
            inFlight.acquire(concurrency);
            long elapsed = System.nanoTime() - start;
            progress(start, true);
            if (liveProgress) {
                out.println();
            }
            out.flush();
            List<Hold> all = new ArrayList<>();
            for (int i = 0; i < buyers; i++) {
                Hold h = holds.get(i);
                if (h != null) {
                    all.add(h);
                }
            }
            return new Result(buyers, seatsAsked.get(), soldOut.get(), errors.get(), retries.get(), elapsed, all,
                    List.copyOf(errorSamples));
        } finally {
            timers.shutdownNow();
        }
    }

    private CompletableFuture<Void> buy(int slot, String buyer, int k, Plan plan) {
        var stub = InventoryServiceGrpc.newFutureStub(router);
        ReserveRequest req = ReserveRequest.newBuilder().setTenantId(tenant).setItemId(itemId).setQuantity(k)
                .setSeats(SeatSelection.newBuilder().setMode(SeatMode.ADJACENT))
                .setIdempotencyKey(runTag + "-seats-" + buyer).setBuyerId(buyer).setRegion(region).build();
        return withRetry(() -> stub.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).reserve(req), 1)
                .thenCompose(resp -> onAnswer(slot, buyer, k, plan, resp));
    }

    private CompletableFuture<Void> onAnswer(int slot, String buyer, int k, Plan plan, ReserveResponse resp) {
        if (resp.getOutcome() == ReserveOutcome.SOLD_OUT) {
            soldOut.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }
        if (resp.getOutcome() != ReserveOutcome.RESERVED) {
            return CompletableFuture.failedFuture(new IllegalStateException("Reserve of ADJACENT " + k + " answered "
                    + resp.getOutcome()));
        }
        long reservedAt = System.nanoTime();
        held.incrementAndGet();
        String holdId = resp.getHold().getHoldId();
        List<String> seats = resp.getHold().getSeatIdsList();
        var stub = InventoryServiceGrpc.newFutureStub(router);
        switch (plan) {
            case KEEP, RELEASE_LATE -> {
                holds.set(slot, new Hold(buyer, k, holdId, seats, plan, Fate.HELD, reservedAt, Long.MAX_VALUE));
                return CompletableFuture.completedFuture(null);
            }
            case CONFIRM -> {
                holds.set(slot, new Hold(buyer, k, holdId, seats, plan, Fate.UNKNOWN, reservedAt, Long.MAX_VALUE));
                ConfirmRequest c = ConfirmRequest.newBuilder().setHoldId(holdId)
                        .setOrderRef("order-" + runTag + "-" + buyer).build();
                return withRetry(() -> stub.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).confirm(c), 1)
                        .thenAccept(x -> holds.set(slot, new Hold(buyer, k, holdId, seats, plan, Fate.SOLD,
                                reservedAt, Long.MAX_VALUE)));
            }
            case RELEASE -> {
                return release(slot, new Hold(buyer, k, holdId, seats, plan, Fate.HELD, reservedAt, Long.MAX_VALUE));
            }
            default -> throw new AssertionError(plan);
        }
    }

    /** Releases {@code h} (recorded at {@code slot}): UNKNOWN from the moment the Release is sent, RELEASED once answered. */
    private CompletableFuture<Void> release(int slot, Hold h) {
        long sentAt = System.nanoTime();
        holds.set(slot, new Hold(h.buyer(), h.asked(), h.holdId(), h.seats(), h.plan(), Fate.UNKNOWN, h.reservedAt(),
                sentAt));
        var stub = InventoryServiceGrpc.newFutureStub(router);
        ReleaseRequest rel = ReleaseRequest.newBuilder().setHoldId(h.holdId()).build();
        return withRetry(() -> stub.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).release(rel), 1)
                .handle((x, err) -> {
                    // A retried Release whose first try went through is told the hold is RELEASED.
                    if (err != null && !alreadyReleased(err)) {
                        throw err instanceof RuntimeException re ? re
                                : new java.util.concurrent.CompletionException(err);
                    }
                    holds.set(slot, new Hold(h.buyer(), h.asked(), h.holdId(), h.seats(), h.plan(), Fate.RELEASED,
                            h.reservedAt(), sentAt));
                    return null;
                });
    }

    private static boolean alreadyReleased(Throwable err) {
        Throwable c = err instanceof java.util.concurrent.CompletionException && err.getCause() != null
                ? err.getCause() : err;
        return GrpcErrors.errorInfo(c).map(i -> i.getReason().equals("HOLD_NOT_HELD")
                && "RELEASED".equals(i.getMetadataMap().get("state"))).orElse(false);
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
                long delay = Math.max(FlashSale.retryAfterMs(t), Math.min(1_000, 10L << Math.min(attempt, 7)));
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

    private void sample(String s) {
        synchronized (errorSamples) {
            if (errorSamples.size() < ERROR_SAMPLES_MAX) {
                errorSamples.add(s);
            }
        }
    }

    private void progress(long startNanos, boolean last) {
        long d = done.get();
        int width = 16;
        int filled = (int) (width * d / Math.max(1, buyers));
        double secs = Math.max(1e-9, (System.nanoTime() - startNanos) / 1e9);
        // At most 80 columns for 50,000 buyers, so that a terminal redraws it in place.
        String bar = String.format("[%s%s] %,d/%,d holds=%,d sold_out=%,d errors=%,d %,.0f/s",
                "#".repeat(filled), ".".repeat(width - filled), d, buyers, held.get(), soldOut.get(), errors.get(),
                d / secs);
        synchronized (out) {
            if (liveProgress) {
                out.print("\r" + bar + " ");
            } else if (!last || d > 0) {
                out.println(bar);
            }
            out.flush();
        }
    }
}
