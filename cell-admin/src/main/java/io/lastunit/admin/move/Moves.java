package io.lastunit.admin.move;

import io.lastunit.admin.move.plan.MovePlanner;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.topology.MoveLease;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.common.topology.Versioned;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tenant moves as an admin process offers them: start one (checked and recorded by
 * {@link MoveStarter}, then run by a {@link Mover} in the background), read them, ask one to abort,
 * resume one, and resume every unfinished move that no mover holds ({@link #resumeUnowned}), so a
 * crashed mover's move is taken over. At most {@code runsMax} moves run here at once; a start or a
 * resume beyond that is refused (QUEUE_FULL), before anything is recorded.
 *
 * <p>Thread-safe. Lifecycle: {@link #close()} interrupts the runs (each stops between two calls
 * and gives its lease up; the moves stay as recorded, to be resumed) and waits for them, bounded.
 */
public final class Moves implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Moves.class);
    /** Most moves ListMoves answers. */
    public static final int LIST_MAX = 1_000;
    /** Longest abort reason. */
    public static final int REASON_LENGTH_MAX = 256;
    /** How long a move that halted here is left alone before {@link #resumeUnowned} tries it again. */
    static final Duration HALTED_BACKOFF = Duration.ofSeconds(30);
    static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private final TopologyStore store;
    private final CuratorFramework client;
    private final String root;
    private final Mover mover;
    private final MoveStarter starter;
    private final InstantSource clock;
    private final int runsMax;
    private final Semaphore slots;
    private final ExecutorService runs;
    private final Set<String> running = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> haltedUntilMs = new ConcurrentHashMap<>();

    /**
     * @param client   started; the caller closes it after this
     * @param channels channels to the shard nodes; the caller closes them after this
     * @param owner    this process, for people (host:pid, a service id)
     * @param runsMax  most moves run here at once (1..64)
     */
    public Moves(TopologyStore store, CuratorFramework client, String root, ShardChannels channels, MovePolicy policy,
            MoverSettings settings, InstantSource clock, MoveFaults faults, String owner, int runsMax) {
        if (runsMax < 1 || runsMax > 64) {
            throw new IllegalArgumentException("runsMax=" + runsMax + " is outside [1, 64]");
        }
        this.store = store;
        this.client = client;
        this.root = root;
        this.clock = clock;
        this.mover = new Mover(store, client, root, channels, new MovePlanner(policy), settings, clock, faults, owner);
        this.starter = new MoveStarter(store, new TenantShards(channels, settings), clock, owner);
        this.runsMax = runsMax;
        this.slots = new Semaphore(runsMax);
        AtomicInteger n = new AtomicInteger();
        this.runs = Executors.newFixedThreadPool(runsMax, r -> {
            Thread t = new Thread(r, "mover-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Tells {@code o} how this process's runs of moves end and how long they paused their tenants. */
    public void observe(MoverObserver o) {
        mover.observe(o);
    }

    /** The owner's name and for ad-hoc foreground runs (the CLI's {@code --wait}). */
    public Mover mover() {
        return mover;
    }

    /**
     * Checks and records a move ({@link MoveStarter}) and runs it in the background. A repeat of a
     * recorded move returns it as recorded and starts nothing new.
     *
     * @throws Failure INVALID_FIELD, UNKNOWN_CELL, UNKNOWN_TENANT, TENANT_ALREADY_IN_CELL,
     *     CELL_LACKS_REGIONS, MOVE_RUNNING, SHARD_UNAVAILABLE, QUEUE_FULL, TOPOLOGY_UNAVAILABLE
     */
    public Move start(String tenant, String toCell, long maxPauseMs, String moveId) throws InterruptedException {
        MoveStarter.validate(tenant, toCell, maxPauseMs, moveId);
        if (!slots.tryAcquire()) {
            throw full();
        }
        Versioned<Move> m;
        try {
            m = starter.start(tenant, toCell, maxPauseMs, moveId);
        } catch (RuntimeException | InterruptedException e) {
            slots.release();
            throw e;
        }
        if (m.value().getStep() != MoveStep.PLANNED || !running.add(m.value().getMoveId())) {
            slots.release(); // a repeat: whoever runs it goes on
            return m.value();
        }
        submit(m.value().getMoveId());
        return m.value();
    }

    /** Records a move (checked as {@link #start}) without running it: the caller runs it ({@link #run}). */
    public Move plan(String tenant, String toCell, long maxPauseMs, String moveId) throws InterruptedException {
        MoveStarter.validate(tenant, toCell, maxPauseMs, moveId);
        return starter.start(tenant, toCell, maxPauseMs, moveId).value();
    }

    /** Runs a move on the caller's thread (holding its lease) until it ends or halts. */
    public Mover.Outcome run(String moveId, Consumer<Move> progress) throws InterruptedException {
        requireMove(moveId);
        return mover.run(moveId, progress);
    }

    /**
     * Resumes a move in the background.
     *
     * @return false when it is finished or already runs here
     * @throws Failure UNKNOWN_MOVE, QUEUE_FULL
     */
    public boolean resume(String moveId) {
        Move m = get(moveId);
        if (MovePlanner.finished(m) || running.contains(moveId)) {
            return false;
        }
        if (!slots.tryAcquire()) {
            throw full();
        }
        if (!running.add(moveId)) {
            slots.release();
            return false;
        }
        submit(moveId);
        return true;
    }

    /**
     * Resumes, in the background and as far as slots allow, every unfinished move that no mover
     * holds (a crashed mover's, or one planned without a mover), except one that halted here less
     * than {@link #HALTED_BACKOFF} ago.
     *
     * @return the moves resumed
     */
    public List<String> resumeUnowned() {
        List<String> resumed = new ArrayList<>();
        long now = clock.millis();
        for (Versioned<Move> v : store.moves()) {
            Move m = v.value();
            String id = m.getMoveId();
            if (MovePlanner.finished(m) || running.contains(id) || haltedUntilMs.getOrDefault(id, 0L) > now
                    || MoveLease.holder(client, root, id).isPresent()) {
                continue;
            }
            if (!slots.tryAcquire()) {
                break;
            }
            if (!running.add(id)) {
                slots.release();
                continue;
            }
            log.atInfo().addKeyValue("tenant", m.getTenantId())
                    .log("resuming move {} (at {}; no mover holds it)", id, m.getStep());
            submit(id);
            resumed.add(id);
        }
        return resumed;
    }

    /** @throws Failure UNKNOWN_MOVE */
    public Move get(String moveId) {
        return requireMove(moveId).value();
    }

    /** Every move (or the tenant's), running ones first, then newest first; at most {@value #LIST_MAX}. */
    public List<Move> list(String tenant) {
        List<Move> moves = new ArrayList<>();
        for (Versioned<Move> v : store.moves()) {
            if (tenant.isEmpty() || v.value().getTenantId().equals(tenant)) {
                moves.add(v.value());
            }
        }
        moves.sort(Comparator.comparing((Move m) -> MovePlanner.finished(m))
                .thenComparing(Comparator.comparingLong(Move::getCreatedAtMs).reversed())
                .thenComparing(Move::getMoveId));
        return moves.size() > LIST_MAX ? List.copyOf(moves.subList(0, LIST_MAX)) : moves;
    }

    /**
     * Asks a move to roll back: sets {@code abort_requested} (compare-and-set), resumes it here if
     * no mover holds it, then waits up to {@code wait} for it to be ABORTING or ABORTED.
     * Idempotent for a move already aborting or aborted.
     *
     * @return the move as recorded at the end of the wait
     * @throws Failure UNKNOWN_MOVE; MOVE_PAST_COMMIT_POINT from FLIPPED on
     */
    public Move abort(String moveId, String reason, Duration wait) throws InterruptedException {
        requestAbort(moveId, reason);
        if (MoveLease.holder(client, root, moveId).isEmpty()) {
            try {
                resume(moveId);
            } catch (Failure f) {
                log.warn("move {}: abort requested, but it cannot be run here now: {}", moveId, f.getMessage());
            }
        }
        long deadline = System.nanoTime() + wait.toNanos();
        Move now = get(moveId);
        while (now.getStep() != MoveStep.ABORTING && now.getStep() != MoveStep.ABORTED
                && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
            now = get(moveId);
        }
        return now;
    }

    /**
     * Sets {@code abort_requested} on a move before its commit point (compare-and-set, read again
     * on a lost race); the mover that holds it rolls it back at its next check. Does nothing to a
     * move already aborting, aborted or asked to.
     *
     * @return the move as recorded after the request
     * @throws Failure UNKNOWN_MOVE; MOVE_PAST_COMMIT_POINT from FLIPPED on
     */
    public Move requestAbort(String moveId, String reason) {
        Versioned<Move> v = requireMove(moveId);
        for (int attempt = 1; ; attempt++) {
            Move m = v.value();
            if (m.getStep() == MoveStep.ABORTING || m.getStep() == MoveStep.ABORTED || m.getAbortRequested()) {
                return m;
            }
            if (!MovePlanner.beforeCommitPoint(m.getStep())) {
                throw Failure.of(Reason.MOVE_PAST_COMMIT_POINT, "move " + moveId + " is " + m.getStep()
                        + ": it has flipped tenant " + m.getTenantId() + " to " + m.getToCell() + " and rolls forward",
                        Map.of("move_id", moveId, "step", m.getStep().name()));
            }
            Move asked = m.toBuilder().setAbortRequested(true)
                    .setReason(reason.isEmpty() ? "abort requested by an admin" : reason)
                    .setUpdatedAtMs(clock.millis()).build();
            try {
                store.updateMove(asked, v.version());
                return asked;
            } catch (ConcurrentModificationException e) {
                if (attempt == 10) {
                    throw Failure.retryable(Reason.MOVE_RUNNING, "move " + moveId + " kept changing; ask again",
                            RETRY_AFTER);
                }
                v = requireMove(moveId);
            }
        }
    }

    /** Who holds the move's lease (runs it), if anyone. */
    public java.util.Optional<String> holder(String moveId) {
        requireMove(moveId);
        return MoveLease.holder(client, root, moveId);
    }

    /** Moves running here now. */
    public Set<String> running() {
        return Set.copyOf(running);
    }

    private Versioned<Move> requireMove(String moveId) {
        if (!TopologyStore.isName(moveId)) {
            throw Failure.invalid("move_id", "'" + moveId + "' is not 1..64 printable ASCII characters without '/'");
        }
        return store.move(moveId).orElseThrow(() -> Failure.of(Reason.UNKNOWN_MOVE, "no move " + moveId,
                Map.of("move_id", moveId)));
    }

    private Failure full() {
        return Failure.retryable(Reason.QUEUE_FULL, runsMax + " moves run in this admin process already; try again"
                + " when one has finished", RETRY_AFTER);
    }

    private void submit(String moveId) {
        try {
            runs.execute(() -> runInBackground(moveId));
        } catch (RuntimeException e) {
            running.remove(moveId);
            slots.release();
            throw e;
        }
    }

    private void runInBackground(String moveId) {
        try {
            Mover.Outcome o = mover.run(moveId, m -> { });
            log.info("move {}: {} ({})", moveId, o.result(), o.detail());
            if (o.result() == Mover.Result.HALTED || o.result() == Mover.Result.STOPPED) {
                haltedUntilMs.put(moveId, clock.millis() + HALTED_BACKOFF.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.info("move {}: interrupted; it stays as recorded, to be resumed", moveId);
        } catch (RuntimeException e) {
            log.warn("move {}: the mover failed; it stays as recorded, to be resumed", moveId, e);
            haltedUntilMs.put(moveId, clock.millis() + HALTED_BACKOFF.toMillis());
        } finally {
            running.remove(moveId);
            slots.release();
        }
    }

    @Override
    public void close() {
        runs.shutdownNow();
        try {
            runs.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
