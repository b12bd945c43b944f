package io.lastunit.testkit.faults;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * The record of what a fault test's clients did, Jepsen-style: each operation is invoked (by a
 * process, on a key) and later completes ok, fail or unknown. Unknown means the client cannot tell
 * whether the operation took effect (a timeout, a connection cut mid-call); it is never counted as
 * ok or as fail, and a checker must allow both for it. The checker itself belongs to the test: this
 * class only records, counts and reports.
 *
 * <p>Owns the entries, at most {@code entriesMax} of them (a test that invokes more fails loudly
 * instead of filling the heap). Thread-safe: every client thread invokes and completes its own
 * operations concurrently; {@link #entries()} is a consistent snapshot.
 *
 * <p>Timestamps are nanoseconds since the history was made, from an injected ticker
 * ({@link System#nanoTime()} by default), so entries order by time within one JVM only.
 *
 * <p>Hazard: an operation invoked and never completed stays pending, which a checker must not read
 * as "did not happen"; call {@link #assertNoPending()} before checking.
 */
public final class History {
    /** Entries a history holds by default. */
    public static final int ENTRIES_MAX_DEFAULT = 1_000_000;

    /** Pending operations named in {@link #assertNoPending()}'s message at most. */
    public static final int PENDING_LISTED_MAX = 20;

    /** How an operation ended, or that it has not yet. */
    public enum Outcome {
        PENDING, OK, FAIL, UNKNOWN
    }

    /**
     * One operation: who invoked what on which key, when, and how it ended. {@code completeNanos} is
     * -1 while pending; {@code value} is set by ok, {@code reason} by fail and unknown.
     */
    public record Entry(int index, String process, String op, String key, long invokeNanos, Outcome outcome,
            long completeNanos, Object value, String reason) {

        Entry complete(Outcome outcome, long completeNanos, Object value, String reason) {
            return new Entry(index, process, op, key, invokeNanos, outcome, completeNanos, value, reason);
        }

        @Override
        public String toString() {
            String head = "#" + index + " " + process + " " + op + (key != null ? " key=" + key : "") + " @"
                    + millis(invokeNanos);
            return switch (outcome) {
                case PENDING -> head + " pending";
                case OK -> head + " ok(" + value + ") @" + millis(completeNanos);
                case FAIL, UNKNOWN -> head + " " + outcome.name().toLowerCase() + "(" + reason + ") @"
                        + millis(completeNanos);
            };
        }

        private static String millis(long nanos) {
            return String.format(Locale.ROOT, "%.3fms", nanos / 1e6);
        }
    }

    /** The handle of one invoked operation; complete it exactly once. Thread-safe. */
    public static final class Op {
        private final History history;
        private final int index;

        private Op(History history, int index) {
            this.history = history;
            this.index = index;
        }

        /** The operation took effect; {@code value} (may be null) is what it returned. */
        public void ok(Object value) {
            history.complete(index, Outcome.OK, value, null);
        }

        /** The operation certainly did not take effect. */
        public void fail(String reason) {
            history.complete(index, Outcome.FAIL, null, Objects.requireNonNull(reason, "reason"));
        }

        /** The operation may or may not have taken effect. */
        public void unknown(String reason) {
            history.complete(index, Outcome.UNKNOWN, null, Objects.requireNonNull(reason, "reason"));
        }

        public int index() {
            return index;
        }
    }

    private final LongSupplier nanoTicker;
    private final long startNanos;
    private final int entriesMax;
    private final List<Entry> entries = new ArrayList<>();
    private final Map<Outcome, Long> counts = new EnumMap<>(Outcome.class);

    /** A history timed by {@link System#nanoTime()} holding up to {@link #ENTRIES_MAX_DEFAULT} entries. */
    public History() {
        this(System::nanoTime, ENTRIES_MAX_DEFAULT);
    }

    /**
     * A history timed by {@code nanoTicker} (with {@link System#nanoTime()} semantics, e.g.
     * {@code ManualClock::nanoTime}) holding up to {@code entriesMax} entries.
     */
    public History(LongSupplier nanoTicker, int entriesMax) {
        if (entriesMax <= 0) {
            throw new IllegalArgumentException("entriesMax must be > 0, got " + entriesMax);
        }
        this.nanoTicker = Objects.requireNonNull(nanoTicker, "nanoTicker");
        this.startNanos = nanoTicker.getAsLong();
        this.entriesMax = entriesMax;
        for (Outcome outcome : Outcome.values()) {
            counts.put(outcome, 0L);
        }
    }

    /**
     * Records that {@code process} invoked {@code op} on {@code key} (null when the operation has none).
     *
     * @throws IllegalStateException if the history already holds {@code entriesMax} entries
     */
    public synchronized Op invoke(String process, String op, String key) {
        Objects.requireNonNull(process, "process");
        Objects.requireNonNull(op, "op");
        if (entries.size() >= entriesMax) {
            throw new IllegalStateException("history is full: entriesMax=" + entriesMax + ", refused " + process + " "
                    + op + " key=" + key);
        }
        int index = entries.size();
        entries.add(new Entry(index, process, op, key, now(), Outcome.PENDING, -1, null, null));
        counts.merge(Outcome.PENDING, 1L, Long::sum);
        return new Op(this, index);
    }

    private synchronized void complete(int index, Outcome outcome, Object value, String reason) {
        Entry entry = entries.get(index);
        if (entry.outcome() != Outcome.PENDING) {
            throw new IllegalStateException("operation completed twice: " + entry + ", then " + outcome);
        }
        entries.set(index, entry.complete(outcome, now(), value, reason));
        counts.merge(Outcome.PENDING, -1L, Long::sum);
        counts.merge(outcome, 1L, Long::sum);
    }

    private long now() {
        return nanoTicker.getAsLong() - startNanos;
    }

    /** Every entry so far, in the order invoked. */
    public synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    /** How many operations have each outcome now (every outcome present, pending included). */
    public synchronized Map<Outcome, Long> counts() {
        return Collections.unmodifiableMap(new EnumMap<>(counts));
    }

    public synchronized long count(Outcome outcome) {
        return counts.get(Objects.requireNonNull(outcome, "outcome"));
    }

    /** The keys of the operations that ended unknown, each once, in the order first invoked. */
    public synchronized List<String> unknownKeys() {
        Set<String> keys = new LinkedHashSet<>();
        for (Entry entry : entries) {
            if (entry.outcome() == Outcome.UNKNOWN && entry.key() != null) {
                keys.add(entry.key());
            }
        }
        return List.copyOf(keys);
    }

    /** The operations not completed yet, in the order invoked. */
    public synchronized List<Entry> pending() {
        return entries.stream().filter(e -> e.outcome() == Outcome.PENDING).toList();
    }

    /**
     * Fails if any operation was invoked and never completed, naming up to {@link #PENDING_LISTED_MAX}
     * of them: a client that lost track of an operation would otherwise make the checker judge a
     * history that is not whole.
     *
     * @throws AssertionError listing the pending operations
     */
    public void assertNoPending() {
        List<Entry> pending = pending();
        if (pending.isEmpty()) {
            return;
        }
        StringBuilder message = new StringBuilder().append(pending.size()).append(" of ").append(entries().size())
                .append(" operations never completed:");
        pending.stream().limit(PENDING_LISTED_MAX).forEach(e -> message.append("\n  ").append(e));
        if (pending.size() > PENDING_LISTED_MAX) {
            message.append("\n  ... and ").append(pending.size() - PENDING_LISTED_MAX).append(" more");
        }
        throw new AssertionError(message.toString());
    }

    /** A summary: the totals by outcome, then one row per operation name. */
    @Override
    public synchronized String toString() {
        Map<String, long[]> byOp = new TreeMap<>();
        for (Entry entry : entries) {
            byOp.computeIfAbsent(entry.op(), op -> new long[Outcome.values().length])[entry.outcome().ordinal()]++;
        }
        int width = Math.max("op".length(), byOp.keySet().stream().mapToInt(String::length).max().orElse(0));
        StringBuilder table = new StringBuilder().append("History: ").append(entries.size()).append(" operations,");
        for (Outcome outcome : Outcome.values()) {
            table.append(' ').append(outcome.name().toLowerCase()).append('=').append(counts.get(outcome));
        }
        table.append(String.format(Locale.ROOT, "%n%-" + width + "s %8s %8s %8s %8s",
                "op", "ok", "fail", "unknown", "pending"));
        byOp.forEach((op, n) -> table.append(String.format(Locale.ROOT, "%n%-" + width + "s %8d %8d %8d %8d", op,
                n[Outcome.OK.ordinal()], n[Outcome.FAIL.ordinal()], n[Outcome.UNKNOWN.ordinal()],
                n[Outcome.PENDING.ordinal()])));
        return table.toString();
    }
}
