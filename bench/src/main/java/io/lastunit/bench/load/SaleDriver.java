package io.lastunit.bench.load;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Channel;
import io.grpc.Status;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.ConfirmResponse;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.HdrHistogram.Recorder;

/**
 * Drives a flash sale through a router: buyer {@code i} (its own buyer id and idempotency key)
 * reserves one unit of item {@code i mod items}, so the buyers spread over the items as evenly as
 * the units do and, with at least as many buyers as units, every unit finds a buyer.
 *
 * <p>Closed loop (rate 0): at most {@code concurrency} buyers in flight; the next is sent when one
 * is answered, and its latency runs from its send. Open loop (rate N): buyer {@code i} is due at
 * {@code start + i/N} s and its latency runs from that intended time, so a stalled platform (or a
 * full in-flight cap, which still bounds memory) shows up in the latency instead of slowing the
 * clock — no coordinated omission.
 *
 * <p>Failed attempts are retried as {@link Outcomes} says, after the server's RetryInfo or a
 * backoff. With {@code confirm}, each RESERVED hold is confirmed before the buyer counts as done.
 *
 * <p>Runs once, from one thread; the gRPC callbacks that update it are thread-safe.
 */
final class SaleDriver {
    static final int ATTEMPTS_MAX = 20;
    static final long DEADLINE_MS = 10_000;
    /** Latencies above this (1 h, in µs) are recorded as this. */
    static final long LATENCY_MAX_MICROS = TimeUnit.HOURS.toMicros(1);
    static final int ERROR_SAMPLES_MAX = 5;

    /** One item on sale. */
    record Item(String tenant, String itemId, long total) {
    }

    /** What to run. {@code rate} 0 is closed loop. Buyer i is served in region {@code (i / items) mod regions}. */
    record Plan(List<Item> items, int buyers, int concurrency, double rate, boolean confirm, List<String> regions,
            String runTag) {
        String regionOf(int buyer) {
            return regions.get((buyer / items.size()) % regions.size());
        }

        long units() {
            return items.stream().mapToLong(Item::total).sum();
        }
    }

    /** Sends of an open loop in one turn of {@link #sendLoop}, at most; the rest in the next turn. */
    static final int SENDS_PER_TURN_MAX = 256;
    /** How long an open-loop sender waits for an in-flight slot before it looks again. */
    static final long SLOT_RETRY_NANOS = 100_000;

    private final InventoryServiceGrpc.InventoryServiceFutureStub stub;
    private final ScheduledExecutorService sendLoop;
    private final Plan plan;
    private final long units;
    private final Progress progress;

    private final Semaphore inFlight;
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong reserved = new AtomicLong();
    private final AtomicLong soldOut = new AtomicLong();
    private final AtomicLong limited = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong confirmErrors = new AtomicLong();
    private final AtomicLong confirmed = new AtomicLong();
    private final LongAdder calls = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final AtomicLong lastReplyNanos = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong sellOutNanos = new AtomicLong(-1);
    private final Recorder allLatency = new Recorder(LATENCY_MAX_MICROS, 3);
    private final Recorder reservedLatency = new Recorder(LATENCY_MAX_MICROS, 3);
    private final List<String> errorSamples = new ArrayList<>();
    private ScheduledExecutorService timers;
    private volatile long startNanos;
    /** Set when the run starts, before the first Reserve is sent. */
    private volatile Timeline timeline;

    /** @param router a channel to the router that already carries the bearer token */
    SaleDriver(Channel router, Plan plan, Progress progress) {
        this(router, plan, progress, null);
    }

    /**
     * @param router a channel to the router that already carries the bearer token
     * @param sendLoop where an open loop sends from: the event loop of {@code router}'s connection
     *     (see {@link OpenLoopSender}); {@code null}: the thread that calls {@link #run}
     */
    SaleDriver(Channel router, Plan plan, Progress progress, ScheduledExecutorService sendLoop) {
        this.sendLoop = sendLoop;
        this.stub = InventoryServiceGrpc.newFutureStub(router);
        this.plan = plan;
        this.units = plan.units();
        this.progress = progress;
        this.inFlight = new Semaphore(plan.concurrency());
    }

    SaleResult run() throws InterruptedException {
        timers = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "flash-sale-load-timer");
            t.setDaemon(true);
            return t;
        });
        try {
            long start = System.nanoTime();
            startNanos = start;
            timeline = new Timeline(start);
            timers.scheduleAtFixedRate(() -> timeline.cut(System.nanoTime()), 1_000, 1_000, TimeUnit.MILLISECONDS);
            if (progress.mode() != Progress.Mode.NONE) {
                long period = progress.mode().periodMillis();
                timers.scheduleAtFixedRate(() -> progress.print(snapshot(), false), period, period,
                        TimeUnit.MILLISECONDS);
            }
            double nanosPerBuyer = plan.rate() > 0 ? 1e9 / plan.rate() : 0;
            if (plan.rate() > 0 && sendLoop != null) {
                OpenLoopSender sender = new OpenLoopSender(start, nanosPerBuyer);
                sendLoop.execute(sender);
                sender.allSent.await();
            } else {
                sendFromThisThread(start, nanosPerBuyer);
            }
            inFlight.acquire(plan.concurrency());
            inFlight.release(plan.concurrency());
            timeline.close(System.nanoTime());
            long last = lastReplyNanos.get();
            long duration = last == Long.MIN_VALUE ? 0 : Math.max(0, last - start);
            progress.print(snapshot(), true);
            List<String> samples;
            synchronized (errorSamples) {
                samples = List.copyOf(errorSamples);
            }
            return new SaleResult(plan.buyers(), reserved.get(), soldOut.get(), limited.get(), errors.get(),
                    confirmErrors.get(), retries.sum(), calls.sum(), confirmed.get(), duration, sellOutNanos.get(),
                    allLatency.getIntervalHistogram(), reservedLatency.getIntervalHistogram(), samples,
                    timeline.seconds(), timeline.dropped());
        } finally {
            timers.shutdownNow();
        }
    }

    /** Closed loop, or an open loop without a {@link #sendLoop}: this thread sends every buyer. */
    private void sendFromThisThread(long start, double nanosPerBuyer) throws InterruptedException {
        for (int i = 0; i < plan.buyers(); i++) {
            long sendAt;
            if (plan.rate() > 0) {
                sendAt = start + Math.round(i * nanosPerBuyer);
                for (long wait = sendAt - System.nanoTime(); wait > 0; wait = sendAt - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
                inFlight.acquire();
            } else {
                inFlight.acquire();
                sendAt = System.nanoTime();
            }
            started.incrementAndGet();
            buy(i, sendAt);
        }
    }

    /**
     * An open loop run on the event loop of the buyers' connection: each turn sends every buyer
     * whose intended time has come (at most {@link #SENDS_PER_TURN_MAX}), then schedules itself
     * for the next one's. The loop thread that reads the replies also writes the requests, so a
     * send wakes no other thread: with a sender thread of its own, the load generator woke two
     * threads per Reserve (the sender from its timed park, then the loop to write), about 15,000
     * wake-ups a second at 12,000/s on the cores it shares with the platform it measures. The
     * intended times and the latency measured from them are the same as the thread's.
     */
    private final class OpenLoopSender implements Runnable {
        private final long start;
        private final double nanosPerBuyer;
        private final CountDownLatch allSent = new CountDownLatch(1);
        private int next;

        OpenLoopSender(long start, double nanosPerBuyer) {
            this.start = start;
            this.nanosPerBuyer = nanosPerBuyer;
        }

        @Override
        public void run() {
            try {
                long now = System.nanoTime();
                for (int sent = 0; next < plan.buyers(); sent++) {
                    long sendAt = start + Math.round(next * nanosPerBuyer);
                    if (sendAt > now) {
                        now = System.nanoTime();
                        if (sendAt > now) {
                            sendLoop.schedule(this, sendAt - now, TimeUnit.NANOSECONDS);
                            return;
                        }
                    }
                    if (sent == SENDS_PER_TURN_MAX) {
                        sendLoop.execute(this); // behind: let the loop read replies between turns
                        return;
                    }
                    if (!inFlight.tryAcquire()) { // the cap is full: its latency keeps counting from sendAt
                        sendLoop.schedule(this, SLOT_RETRY_NANOS, TimeUnit.NANOSECONDS);
                        return;
                    }
                    started.incrementAndGet();
                    int buyer = next++;
                    try {
                        buy(buyer, sendAt);
                    } catch (RuntimeException e) {
                        inFlight.release(); // buy() answers a failed call itself; this is anything before it
                        errors.incrementAndGet();
                        throw e;
                    }
                }
            } catch (RuntimeException e) { // the loop shut down, or a send failed outside the call
                errors.addAndGet(plan.buyers() - next);
                sample("open-loop sender stopped with " + (plan.buyers() - next) + " buyers not sent: " + e);
            }
            allSent.countDown();
        }
    }

    Progress.Snapshot snapshot() {
        long d = done.get();
        return new Progress.Snapshot(d, plan.buyers(), reserved.get(), units, soldOut.get(), limited.get(),
                errors.get(), started.get() - d, calls.sum(), (System.nanoTime() - startNanos) / 1e9);
    }

    private void buy(int i, long sendAt) {
        SaleDriver.Item item = plan.items().get(i % plan.items().size());
        String buyer = "buyer-" + plan.runTag() + "-" + i;
        ReserveRequest req = ReserveRequest.newBuilder().setTenantId(item.tenant()).setItemId(item.itemId())
                .setQuantity(1).setIdempotencyKey("load-" + plan.runTag() + "-" + i).setBuyerId(buyer)
                .setRegion(plan.regionOf(i)).build();
        call(() -> {
            calls.increment();
            return stub.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).reserve(req);
        }, 1, resp -> onReserve(i, sendAt, resp), (t, next) -> {
            recordReserve(sendAt);
            if (next == Outcomes.Next.LIMITED) {
                limited.incrementAndGet();
            } else {
                errors.incrementAndGet();
                sample(buyer + ": Reserve " + Outcomes.describe(t));
            }
            finish();
        });
    }

    private void onReserve(int i, long sendAt, ReserveResponse resp) {
        long now = recordReserve(sendAt);
        ReserveOutcome outcome = resp.getOutcome();
        if (outcome == ReserveOutcome.RESERVED) {
            reservedLatency.recordValue(Math.min(LATENCY_MAX_MICROS, Math.max(0, (now - sendAt) / 1_000)));
            if (reserved.incrementAndGet() == units) {
                sellOutNanos.compareAndSet(-1, now - startNanos);
            }
            if (plan.confirm()) {
                confirm(i, resp.getHold().getHoldId());
                return;
            }
        } else if (outcome == ReserveOutcome.SOLD_OUT) {
            soldOut.incrementAndGet();
        } else if (outcome == ReserveOutcome.LIMIT_EXCEEDED) {
            limited.incrementAndGet();
        } else {
            errors.incrementAndGet();
            sample("buyer-" + plan.runTag() + "-" + i + ": Reserve answered " + outcome);
        }
        finish();
    }

    private void confirm(int i, String holdId) {
        ConfirmRequest c = ConfirmRequest.newBuilder().setHoldId(holdId)
                .setOrderRef("order-" + plan.runTag() + "-" + i).build();
        this.<ConfirmResponse>call(() -> stub.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).confirm(c), 1,
                resp -> {
                    confirmed.incrementAndGet();
                    finish();
                }, (t, next) -> {
                    errors.incrementAndGet();
                    confirmErrors.incrementAndGet();
                    sample("buyer-" + plan.runTag() + "-" + i + ": Confirm " + Outcomes.describe(t));
                    finish();
                });
    }

    /** What happens when a call has failed for good. */
    private interface OnFailure {
        void failed(Throwable t, Outcomes.Next next);
    }

    /** Runs {@code call}, retrying it (the same request) as {@link Outcomes#afterFailure} says. */
    private <T> void call(Supplier<ListenableFuture<T>> call, int attempt, Consumer<T> onSuccess, OnFailure onFailure) {
        ListenableFuture<T> f;
        try {
            f = call.get();
        } catch (RuntimeException e) {
            onFailure.failed(e, Outcomes.Next.ERROR);
            return;
        }
        Futures.addCallback(f, new FutureCallback<T>() {
            @Override
            public void onSuccess(T value) {
                onSuccess.accept(value);
            }

            @Override
            public void onFailure(Throwable t) {
                Outcomes.Next next = Outcomes.afterFailure(Status.fromThrowable(t).getCode(), attempt, ATTEMPTS_MAX);
                if (next != Outcomes.Next.RETRY) {
                    onFailure.failed(t, next);
                    return;
                }
                retries.increment();
                long delay = Outcomes.retryDelayMs(Outcomes.retryAfterMs(t), attempt);
                try {
                    timers.schedule(() -> call(call, attempt + 1, onSuccess, onFailure), delay, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException stopped) {
                    onFailure.failed(t, Outcomes.Next.ERROR);
                }
            }
        }, MoreExecutors.directExecutor());
    }

    /** Records a Reserve's latency since {@code sendAt} in µs, in the run and in its second; returns now. */
    private long recordReserve(long sendAt) {
        long now = System.nanoTime();
        long micros = Math.min(LATENCY_MAX_MICROS, Math.max(0, (now - sendAt) / 1_000));
        allLatency.recordValue(micros);
        timeline.record(micros);
        return now;
    }

    private void finish() {
        lastReplyNanos.accumulateAndGet(System.nanoTime(), Math::max);
        done.incrementAndGet();
        inFlight.release();
    }

    private void sample(String s) {
        synchronized (errorSamples) {
            if (errorSamples.size() < ERROR_SAMPLES_MAX) {
                errorSamples.add(s);
            }
        }
    }
}
