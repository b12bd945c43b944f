package io.lastunit.bench.chaos;

import io.lastunit.bench.chaos.plan.FaultKind;
import io.lastunit.bench.chaos.plan.ScheduledFault;
import io.lastunit.testkit.faults.Nemesis;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Carries out a schedule on its own thread: each fault started at its time (or once the one
 * before it has healed, if that took longer: the row says how late), healed after its duration,
 * one line said when each is applied and when it healed. A fault whose start throws is healed at
 * once and recorded as not applied; a heal that throws is tried again up to {@link #HEAL_TRIES}
 * times. {@link #stop} (bounded) interrupts the waits and heals whatever is on.
 *
 * <p>Times are nanoseconds since {@code originNanos} ({@link System#nanoTime()}), the sale's
 * history's origin, so the report can put calls in fault windows.
 */
final class FaultRunner {
    static final int HEAL_TRIES = 5;

    /**
     * What happened to one fault. {@code clientsHealedNanos} is when the clients' path was whole
     * again: the heal's end, except for a failover, where it is the promotion's end (its heal, a
     * new standby, does not stand in the clients' way). -1 for what did not happen.
     */
    record Applied(ScheduledFault fault, long startNanos, long appliedNanos, long healedNanos,
                   long clientsHealedNanos, String error) {
        boolean ok() {
            return error == null && appliedNanos >= 0 && healedNanos >= 0;
        }
    }

    private final List<ScheduledFault> faults;
    private final Function<ScheduledFault, Nemesis> nemeses;
    private final long originNanos;
    private final Consumer<String> say;
    private final List<Applied> applied = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile Nemesis current;

    FaultRunner(List<ScheduledFault> faults, Function<ScheduledFault, Nemesis> nemeses, long originNanos,
                Consumer<String> say) {
        this.faults = List.copyOf(faults);
        this.nemeses = nemeses;
        this.originNanos = originNanos;
        this.say = say;
        this.thread = new Thread(this::runAll, "chaos-faults");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    private long now() {
        return System.nanoTime() - originNanos;
    }

    private void runAll() {
        try {
            for (ScheduledFault f : faults) {
                sleepUntil(f.at().toNanos());
                runOne(f);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void runOne(ScheduledFault f) throws InterruptedException {
        Nemesis n = nemeses.apply(f);
        long start = now();
        long late = start - f.at().toNanos();
        long appliedAt = -1;
        String error = null;
        current = n;
        try {
            n.start();
            appliedAt = now();
            say.accept(String.format(Locale.ROOT, "+%6.1f s  fault #%d %s on %s%s: applied in %.1f s%s", start / 1e9,
                    f.number(), f.kind().label(), f.target(), f.detail().isEmpty() ? "" : " (" + f.detail() + ")",
                    (appliedAt - start) / 1e9, late > 500_000_000L ? String.format(Locale.ROOT, " (%.1f s late)",
                            late / 1e9) : ""));
        } catch (RuntimeException e) {
            error = "not applied: " + e.getMessage();
            say.accept(String.format(Locale.ROOT, "+%6.1f s  fault #%d %s on %s: FAILED to apply: %s", now() / 1e9,
                    f.number(), f.kind().label(), f.target(), e));
        }
        try {
            if (appliedAt >= 0) {
                sleepUntil(appliedAt + f.duration().toNanos());
            }
        } finally {
            long clientsHealed = f.kind() == FaultKind.PG_FAILOVER ? appliedAt : -1;
            long healed = heal(n, f);
            if (healed < 0 && error == null) {
                error = "not healed";
            }
            current = null;
            applied.add(new Applied(f, start, appliedAt, healed, clientsHealed >= 0 ? clientsHealed : healed, error));
        }
    }

    /** Heals, trying again on a failure; when it healed, or -1. */
    private long heal(Nemesis n, ScheduledFault f) {
        for (int i = 1; i <= HEAL_TRIES; i++) {
            try {
                long t0 = now();
                n.stop();
                long t = now();
                say.accept(String.format(Locale.ROOT, "+%6.1f s  fault #%d %s on %s: healed in %.1f s", t / 1e9,
                        f.number(), f.kind().label(), f.target(), (t - t0) / 1e9));
                return t;
            } catch (RuntimeException e) {
                say.accept(String.format(Locale.ROOT, "+%6.1f s  fault #%d: heal %d of %d failed: %s", now() / 1e9,
                        f.number(), i, HEAL_TRIES, e));
                try {
                    Thread.sleep(1_000);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        return -1;
    }

    private void sleepUntil(long atNanos) throws InterruptedException {
        long wait;
        while ((wait = atNanos - now()) > 0) {
            Thread.sleep(Math.max(1, Math.min(wait / 1_000_000, 200)));
        }
    }

    /** Waits (bounded) for the schedule to end; if it has not by then, interrupts it (the fault on is healed). */
    void stop(long waitMillis) throws InterruptedException {
        thread.join(waitMillis);
        if (thread.isAlive()) {
            thread.interrupt();
            thread.join(120_000);
        }
        Nemesis n = current;
        if (thread.isAlive() && n != null) {
            n.stop();
        }
    }

    List<Applied> applied() {
        return new ArrayList<>(applied);
    }
}
