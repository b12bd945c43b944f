package io.lastunit.bench.jmh;

import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveResponse;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * How many Reserves one benchmark thread keeps in flight. {@code pipeline=1} (the default) is a
 * caller that sends one Reserve and blocks until it is answered: concurrency = JMH threads.
 * {@code pipeline=N} is a caller the way a service calls lastunit — asynchronously, with up to N
 * requests outstanding: each invocation waits for its oldest request, checks it and sends a new
 * one in its place, so exactly N are in flight from each thread and every invocation is one
 * answered Reserve. Concurrency = threads × N: {@code -t 4 -p pipeline=64} is 256 requests in
 * flight from 4 threads instead of from 256 blocked threads, which on 2 cores would spend much of
 * the CPU waking them (a park and an unpark per Reserve).
 *
 * <p>JMH gives each benchmark thread its own instance. Not thread-safe (it does not need to be).
 */
@State(Scope.Thread)
public class Pipeline {
    /** Requests each benchmark thread keeps in flight. */
    @Param({"1"})
    public int pipeline;

    private Future<ReserveResponse>[] slots;
    private int next;

    @Setup(Level.Trial)
    @SuppressWarnings("unchecked")
    public void setUp() {
        if (pipeline < 1 || pipeline > 4096) {
            throw new IllegalArgumentException("pipeline must be 1..4096, got " + pipeline);
        }
        slots = new Future[pipeline];
        next = 0;
    }

    /**
     * One answered Reserve: with {@code pipeline=1}, sends and waits; otherwise waits for the
     * oldest request in flight (none while the pipeline first fills), then sends a new one in its
     * place. Fails unless the answer it waited for is RESERVED.
     *
     * @return the answer waited for, or null while the pipeline fills
     */
    public ReserveResponse call(Supplier<? extends Future<ReserveResponse>> send) {
        if (pipeline == 1) {
            return reserved(await(send.get()));
        }
        Future<ReserveResponse> oldest = slots[next];
        ReserveResponse r = oldest == null ? null : reserved(await(oldest));
        slots[next] = send.get();
        next = next + 1 == pipeline ? 0 : next + 1;
        return r;
    }

    /** Waits out what is still in flight after an iteration, so none spills into the next. */
    @TearDown(Level.Iteration)
    public void drain() {
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null) {
                reserved(await(slots[i]));
                slots[i] = null;
            }
        }
        next = 0;
    }

    static ReserveResponse reserved(ReserveResponse r) {
        if (r.getOutcome() != ReserveOutcome.RESERVED) {
            throw new IllegalStateException("expected RESERVED, got " + r.getOutcome());
        }
        return r;
    }

    private static ReserveResponse await(Future<ReserveResponse> f) {
        try {
            return f.get(RouterClient.DEADLINE_SECONDS + 5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a Reserve", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Reserve failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("Reserve not answered in " + (RouterClient.DEADLINE_SECONDS + 5) + " s", e);
        }
    }
}
