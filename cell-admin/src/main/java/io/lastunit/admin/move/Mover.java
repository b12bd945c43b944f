package io.lastunit.admin.move;

import io.lastunit.admin.move.plan.MoveAction;
import io.lastunit.admin.move.plan.MoveDecision;
import io.lastunit.admin.move.plan.MoveFacts;
import io.lastunit.admin.move.plan.MovePlanner;
import io.lastunit.admin.move.plan.SummaryComparison;
import io.lastunit.admin.move.plan.SummaryInvariants;
import io.lastunit.admin.move.plan.SummaryParts;
import io.lastunit.api.shard.v1.DropState;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.SummaryPart;
import io.lastunit.api.shard.v1.TenantMoveRequest;
import io.lastunit.api.shard.v1.TenantSummary;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.topology.MoveLease;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.common.topology.Versioned;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries a tenant move out (DESIGN §8), step by step, against the shard nodes: the executor of
 * what {@link MovePlanner} decides. A run takes the move's lease ({@link MoveLease}), adopts the
 * move (writes its owner, so a mover that held it before fails its next write and stops), then
 * loops: carry out the recorded step, ask the planner what comes next, record that step in
 * {@code moves/{id}} (compare-and-set on its version), and only then act on it. A crashed run is
 * resumed by any mover from what was recorded: every step's actions are idempotent and are simply
 * carried out again; a COPYING or CATCHING_UP pass without the snapshots of the run that crashed
 * (they live in memory) copies everything again, which upserts land once.
 *
 * <p>The steps' actions: PLANNED drops leftovers of earlier moves on the target's shards; COPYING
 * and CATCHING_UP copy ({@link CopyPass}); FENCED marks the tenant MOVING (compare-and-set on the
 * epoch the move planned), freezes it on every source shard and copies the last delta, within
 * what is left of the pause budget (the settled rows of both sides are compared, and the target's
 * invariants checked, just before the fence is recorded); VERIFIED compares the recent rows of both
 * sides, put together with the settled ones ({@link SummaryComparison}), and recomputes the
 * invariants from them ({@link SummaryInvariants}); FLIPPED places the tenant in the target cell (compare-and-set
 * on the fenced epoch: the commit point) and activates the target; CLEANED retires and drops the
 * source and ends the placement's move; ABORTING puts the tenant back ACTIVE on the source,
 * unfreezes it and drops the partial copy.
 *
 * <p>Fencing: the adoption's write gives the run its token, the move znode's version after it;
 * every shard call that writes carries it, and a shard refuses a token lower than one it has seen
 * for the move, in the call's own transaction ({@code MOVE_SUPERSEDED}). The run then stops
 * ({@link Result#STOPPED}), as when it loses its lease: it repeats nothing and rolls nothing back.
 *
 * <p>Thread-safe: each {@link #run} is independent (one move per run; two runs on one move meet at
 * its lease). Blocking. Hazard: the lease is advice between movers. A shard call in flight when
 * the lease is lost still lands; what fences it is the token: once the mover that took over has
 * called a shard, the stale mover's later calls there are refused, and it stops at the first
 * refusal or at its next write of the move (a compare-and-set). A stale call that lands on a shard
 * before the new mover's first call there is harmless: the new mover carries its step out again
 * (a copy from scratch, as it has no snapshots) over it.
 */
public final class Mover {
    private static final Logger log = LoggerFactory.getLogger(Mover.class);

    /** How a run ended. */
    public enum Result {
        /** The move rolled forward and finished. */
        CLEANED,
        /** The move rolled back and finished. */
        ABORTED,
        /** A step failed for now (after the commit point, or while rolling back): resume it later. */
        HALTED,
        /** Another mover holds the move's lease. */
        BUSY,
        /**
         * This run lost its lease, ZooKeeper, or a write of the move to another writer, or a shard
         * refused its token (MOVE_SUPERSEDED: another mover adopted the move): it stopped acting.
         */
        STOPPED
    }

    /** The end of a run: the move as last read or written, and what to tell people. */
    public record Outcome(Result result, Move move, String detail) {
    }

    private final TopologyStore store;
    private final CuratorFramework client;
    private final String root;
    private final TenantShards shards;
    private final CopyPass copy;
    private final MovePlanner planner;
    private final MoverSettings settings;
    private final InstantSource clock;
    private final MoveFaults faults;
    private final String owner;
    private volatile MoverObserver observer = MoverObserver.NONE;

    /**
     * @param client   the ZooKeeper client of {@code store}, for the lease
     * @param channels channels to the shard nodes (the caller's to close)
     * @param owner    who runs moves here, for people (host:pid, a service id)
     */
    public Mover(TopologyStore store, CuratorFramework client, String root, ShardChannels channels, MovePlanner planner,
            MoverSettings settings, InstantSource clock, MoveFaults faults, String owner) {
        this.store = Objects.requireNonNull(store, "store");
        this.client = Objects.requireNonNull(client, "client");
        this.root = Objects.requireNonNull(root, "root");
        this.shards = new TenantShards(channels, settings);
        this.copy = new CopyPass(shards, settings, Objects.requireNonNull(faults, "faults"));
        this.planner = Objects.requireNonNull(planner, "planner");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.faults = Objects.requireNonNull(faults, "faults");
        this.owner = Objects.requireNonNull(owner, "owner");
    }

    /** Tells {@code o} how runs end and how long each move paused its tenant, from now on. */
    public void observe(MoverObserver o) {
        this.observer = java.util.Objects.requireNonNull(o, "observer");
    }

    public String owner() {
        return owner;
    }

    /**
     * Runs move {@code moveId} until it has finished (CLEANED or ABORTED), halts, or this run must
     * stop; the lease is held throughout and given up at the end.
     *
     * @param progress called with the move after each write of it (on this thread; keep it short)
     * @throws IllegalStateException when there is no such move
     */
    public Outcome run(String moveId, Consumer<Move> progress) throws InterruptedException {
        Versioned<Move> first = store.move(moveId).orElseThrow(() ->
                new IllegalStateException("no move " + moveId));
        if (MovePlanner.finished(first.value())) {
            return outcome(first.value());
        }
        Optional<MoveLease> lease = MoveLease.tryAcquire(client, root, moveId, owner);
        if (lease.isEmpty()) {
            String holder = MoveLease.holder(client, root, moveId).orElse("another mover");
            observer.moveEnded(Result.BUSY);
            return new Outcome(Result.BUSY, first.value(), "move " + moveId + " is being run by " + holder);
        }
        Run r = new Run(lease.get(), progress);
        try {
            r.m = store.move(moveId).orElseThrow();
            if (MovePlanner.finished(r.m.value())) {
                return outcome(r.m.value());
            }
            adopt(r);
            r.token = r.m.version();
            log.info("move {}: adopted by {} at step {}, mover token {}", moveId, owner, r.m.value().getStep(),
                    r.token);
            progress.accept(r.m.value());
            r.resolveShards();
            return loop(r);
        } catch (Failure f) {
            if (f.reason() != Reason.TOPOLOGY_UNAVAILABLE) {
                throw f;
            }
            log.warn("move {}: stopped: {}", moveId, f.getMessage());
            observer.moveEnded(Result.STOPPED);
            return new Outcome(Result.STOPPED, r.current(), f.getMessage());
        } catch (Stale e) {
            log.warn("move {}: stopped: {}", moveId, e.getMessage());
            observer.moveEnded(Result.STOPPED);
            return new Outcome(Result.STOPPED, r.current(), e.getMessage());
        } catch (TenantShards.Superseded e) {
            // Another mover adopted the move and acted on a shard: it owns the move. Nothing is
            // retried or rolled back here, and nothing more is written.
            log.warn("move {}: stopped, superseded (mover token {}): {}", moveId, r.token, e.getMessage());
            observer.moveEnded(Result.STOPPED);
            return new Outcome(Result.STOPPED, r.current(), e.getMessage());
        } finally {
            r.close();
        }
    }

    /**
     * Writes this mover in as the move's owner: a mover that ran it before (its lease lost) fails
     * its next compare-and-set and stops. An abort requested meanwhile is kept.
     */
    private void adopt(Run r) {
        for (int attempt = 1; ; attempt++) {
            try {
                r.record(stamp(r.m.value().toBuilder()).build());
                return;
            } catch (AbortSeen e) {
                if (attempt == 3) {
                    throw new Stale("move " + r.m.value().getMoveId() + " kept changing while this mover took it over");
                }
                r.m = e.fresh;
            }
        }
    }

    private Outcome loop(Run r) throws InterruptedException {
        while (true) {
            Move move = r.m.value();
            if (MovePlanner.finished(move)) {
                return outcome(move);
            }
            try {
                MoveDecision d = planner.beforeActing(move, clock.millis());
                StepResult res = null;
                if (d == null) {
                    res = act(r, move);
                    d = planner.next(move, res.facts());
                    while (d.action() == MoveAction.WAIT_FOR_TRANSFERS) {
                        log.info("move {}: {}; waiting up to {} ms", move.getMoveId(), d.reason(),
                                settings.transferWaitMax().toMillis());
                        res = res.with(waitForTransfers(r, res.facts()));
                        d = planner.next(move, res.facts());
                    }
                    if (d.action() == MoveAction.FENCE) {
                        res = res.with(settle(r, move, res.facts()));
                        d = planner.next(move, res.facts());
                    }
                }
                switch (d.action()) {
                    case DONE:
                        return outcome(move);
                    case HALT:
                        log.warn("move {}: halted: {}", move.getMoveId(), d.reason());
                        r.record(stamp(move.toBuilder()).setReason(d.reason()).build());
                        r.progress.accept(r.m.value());
                        observer.moveEnded(Result.HALTED);
                        return new Outcome(Result.HALTED, r.m.value(), d.reason());
                    case FINISH:
                        r.record(finish(move));
                        observer.moveEnded(r.m.value().getStep() == MoveStep.ABORTED ? Result.ABORTED : Result.CLEANED);
                        break;
                    default:
                        r.record(next(move, d, res));
                        if (d.action() == MoveAction.CLEAN) {
                            observer.paused(move.getFromCell(), move.getToCell(), r.m.value().getPauseMs());
                        }
                        break;
                }
                if (d.action() == MoveAction.FINISH) {
                    log.info("move {}: finished {} ({})", move.getMoveId(), r.m.value().getStep(), d.reason());
                } else {
                    log.info("move {}: {} -> {} ({})", move.getMoveId(), move.getStep(), r.m.value().getStep(),
                            d.reason());
                }
                faults.afterRecorded(r.m.value());
                r.progress.accept(r.m.value());
            } catch (AbortSeen e) {
                r.m = e.fresh; // the next turn aborts before acting
            }
        }
    }

    /** What carrying out a step found: the planner's facts, the rows it copied, the pause it measured. */
    private record StepResult(MoveFacts facts, MoveCounts copied, long pauseMs) {
        StepResult with(MoveFacts f) {
            return new StepResult(f, copied, pauseMs);
        }
    }

    private StepResult act(Run r, Move move) throws InterruptedException {
        try {
            switch (move.getStep()) {
                case PLANNED:
                    shards.drop(r.targets, r.request, DropState.IMPORTING, r::check);
                    shards.drop(r.targets, r.request, DropState.MOVED, r::check);
                    return done();
                case COPYING:
                case CATCHING_UP:
                    return pass(r, move);
                case FENCED:
                    return fence(r, move);
                case VERIFIED:
                    return verify(r, move);
                case FLIPPED:
                    return flip(r, move);
                case CLEANED:
                    clean(r, move);
                    return done();
                case ABORTING:
                    rollBack(r, move);
                    return done();
                case ABORTED:
                    return done();
                default:
                    throw new IllegalStateException("move " + move.getMoveId() + " has no step: " + move.getStep());
            }
        } catch (TenantShards.StepFailed e) {
            log.warn("move {}: {} failed: {}", move.getMoveId(), move.getStep(), e.getMessage());
            return new StepResult(MoveFacts.failed(clock.millis(), e.getMessage()), null, 0);
        }
    }

    private StepResult done() {
        return new StepResult(MoveFacts.done(clock.millis()), null, 0);
    }

    /** COPYING (everything) or CATCHING_UP (since each source's last snapshot in this run). */
    private StepResult pass(Run r, Move move) throws InterruptedException {
        long t0 = clock.millis();
        Map<String, CopyPass.Since> since = move.getStep() == MoveStep.COPYING ? Map.of() : r.snapshots;
        CopyPass.Result res = copy.run(move.getTenantId(), move.getMoveId(), r.token, r.sources, r.targetsByRegion,
                since, r::check, r::checkpoint, TenantShards.NO_DEADLINE, r.pool);
        r.snapshots.putAll(res.snapshots());
        long passMs = clock.millis() - t0;
        long pending = move.getStep() == MoveStep.COPYING ? 0 : pendingTransfers(r, TenantShards.NO_DEADLINE);
        return new StepResult(MoveFacts.pass(clock.millis(), res.rowsExported(), passMs, pending), res.copied(), 0);
    }

    private StepResult fence(Run r, Move move) throws InterruptedException {
        Versioned<TenantPlacement> p = placement(move);
        int fencedEpoch = move.getFencedEpoch();
        if (p.value().getState() != TenantState.MOVING) {
            if (p.version() != move.getPlannedEpoch()) {
                throw new TenantShards.StepFailed("tenant " + move.getTenantId() + " is at epoch " + p.version()
                        + ", not the epoch " + move.getPlannedEpoch() + " the move planned; someone else changed it");
            }
            cas(() -> store.setTenantState(move.getTenantId(), TenantState.MOVING, move.getMoveId(),
                    move.getPlannedEpoch()));
        } else if (p.version() != fencedEpoch) {
            throw new TenantShards.StepFailed("tenant " + move.getTenantId() + " is MOVING at epoch " + p.version()
                    + ", not the fenced epoch " + fencedEpoch);
        }
        long deadline = budgetDeadline(move);
        shards.freeze(r.sources, r.request, r::check, deadline);
        long t0 = clock.millis();
        CopyPass.Result res = copy.run(move.getTenantId(), move.getMoveId(), r.token, r.sources, r.targetsByRegion,
                r.snapshots, r::check, r::checkpoint, deadline, r.pool);
        r.snapshots.putAll(res.snapshots());
        return new StepResult(MoveFacts.pass(clock.millis(), res.rowsExported(), clock.millis() - t0, 0),
                res.copied(), 0);
    }

    /**
     * Before the fence, once the planner would fence: both sides' settled figures at the cut of the
     * last pass (the holds and transfers that ended before it: they never change again, and the
     * pass copied them), compared, and the target's invariants checked in full (only this mover's
     * passes write there). What it finds different makes the planner abort before fencing; if
     * nothing, the move's verification reads only the recent rows inside the fence. Without a cut
     * for every source (a shard that gave none), or when a shard fails the reads, verification
     * reads everything instead.
     */
    private MoveFacts settle(Run r, Move move, MoveFacts facts) throws InterruptedException {
        r.baseline = null;
        long cut = Long.MAX_VALUE;
        for (ShardInfo s : r.sources) {
            CopyPass.Since since = r.snapshots.get(s.getShardId());
            if (since == null || since.cutMicros() <= 0) {
                return facts;
            }
            cut = Math.min(cut, since.cutMicros());
        }
        long t0 = clock.millis();
        Figures f;
        try {
            f = figures(r, move, SummaryPart.SUMMARY_PART_SETTLED, cut, true, TenantShards.NO_DEADLINE);
        } catch (TenantShards.StepFailed e) {
            // Not a reason to abort: verification then reads every row, inside the fence.
            log.warn("move {}: reading the settled rows before the fence failed ({}); verification will read"
                    + " every row", move.getMoveId(), e.getMessage());
            return facts;
        }
        List<String> differences = new ArrayList<>(SummaryComparison.differences(f.source(), f.target()));
        differences.addAll(f.drifts());
        if (differences.isEmpty()) {
            r.baseline = new Baseline(cut, f.source(), f.target());
        }
        log.info("move {}: settled rows (ended before the cut {}) of both sides compared in {} ms: {}",
                move.getMoveId(), cut, clock.millis() - t0, differences.isEmpty() ? "equal"
                        : differences.size() + " difference(s), the first: " + differences.get(0));
        return facts.withDifferences(differences);
    }

    /**
     * Inside the fence: both sides' summaries, compared, and the invariants of DESIGN §1 recomputed
     * from them on both sides. With the settled figures read before the fence, only the recent part
     * is read here (live holds, rows ended since the cut, every item and bucket row), so the pause
     * does not grow with the tenant's history; without them (a mover that resumed the move in the
     * fence), every row is read and the target's own invariant check runs beside it.
     */
    private StepResult verify(Run r, Move move) throws InterruptedException {
        long deadline = budgetDeadline(move);
        Baseline b = r.baseline;
        Figures f = b == null ? figures(r, move, SummaryPart.SUMMARY_PART_ALL, 0, true, deadline)
                : figures(r, move, SummaryPart.SUMMARY_PART_RECENT, b.cutMicros(), false, deadline);
        List<TenantSummary> source;
        List<TenantSummary> target;
        try {
            source = b == null ? f.source() : SummaryParts.combine(b.source(), f.source());
            target = b == null ? f.target() : SummaryParts.combine(b.target(), f.target());
        } catch (IllegalArgumentException e) {
            // Items the settled figures had are gone: nothing deletes them, so it is a difference.
            return new StepResult(MoveFacts.verified(clock.millis(), List.of(e.getMessage())), null, 0);
        }
        List<String> differences = new ArrayList<>(SummaryComparison.differences(source, target));
        differences.addAll(SummaryInvariants.drifts("source", source));
        differences.addAll(SummaryInvariants.drifts("target", target));
        differences.addAll(f.drifts());
        return new StepResult(MoveFacts.verified(clock.millis(), differences), null, 0);
    }

    /** What the settled rows came to before the fence, on both sides: the rest of verification's figures. */
    private record Baseline(long cutMicros, List<TenantSummary> source, List<TenantSummary> target) {
    }

    /** Both sides' summaries of one part, and the target's invariant drifts when they were checked. */
    private record Figures(List<TenantSummary> source, List<TenantSummary> target, List<String> drifts) {
    }

    /**
     * One fan-out of SummarizeTenant to every source and target shard and, with {@code check}, the
     * target's invariant check at once (on the run's pool): the time is the longer of the two.
     */
    private Figures figures(Run r, Move move, SummaryPart part, long cut, boolean check, long deadline)
            throws InterruptedException {
        Future<List<InvariantReport>> checks = check ? r.pool.submit(
                () -> shards.checkInvariants(r.targets, move.getTenantId(), r::check, deadline)) : null;
        List<ShardInfo> both = new ArrayList<>(r.sources);
        both.addAll(r.targets);
        List<TenantSummary> all;
        List<InvariantReport> reports;
        try {
            all = shards.summarize(both, move.getTenantId(), part, cut, r::check, deadline);
            reports = checks == null ? List.of() : checks.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof InterruptedException ie) {
                throw ie;
            }
            throw new IllegalStateException("the target's invariant check failed", e.getCause());
        } finally {
            if (checks != null) {
                checks.cancel(true);
            }
        }
        List<String> drifts = new ArrayList<>();
        for (InvariantReport report : reports) {
            if (!report.getOk()) {
                drifts.add("target shard " + report.getShardId() + ": " + report.getDriftsCount()
                        + " invariant drift(s), the first: " + (report.getDriftsCount() == 0 ? "?"
                        : report.getDrifts(0).getKind() + " " + report.getDrifts(0).getItemId() + ": "
                        + report.getDrifts(0).getDetail()));
            }
        }
        return new Figures(List.copyOf(all.subList(0, r.sources.size())),
                List.copyOf(all.subList(r.sources.size(), all.size())), drifts);
    }

    private StepResult flip(Run r, Move move) throws InterruptedException {
        Versioned<TenantPlacement> p = placement(move);
        if (!p.value().getCell().equals(move.getToCell())) {
            if (p.value().getState() != TenantState.MOVING || p.version() != move.getFencedEpoch()) {
                throw new TenantShards.StepFailed("tenant " + move.getTenantId() + " is " + p.value().getState()
                        + " in " + p.value().getCell() + " at epoch " + p.version() + ", not MOVING at the fenced epoch "
                        + move.getFencedEpoch() + "; the flip needs an operator");
            }
            cas(() -> store.assignTenant(move.getTenantId(), move.getToCell(), move.getMoveId(), move.getFencedEpoch()));
        }
        shards.activate(r.targets, r.request, r::check);
        long pauseMs = Math.max(0, clock.millis() - move.getFencedAtMs());
        return new StepResult(MoveFacts.done(clock.millis()), null, pauseMs);
    }

    private void clean(Run r, Move move) throws InterruptedException {
        shards.retire(r.sources, r.request, r::check);
        if (!settings.retireGrace().isZero()) {
            Thread.sleep(settings.retireGrace().toMillis());
        }
        shards.drop(r.sources, r.request, DropState.MOVED, r::check);
        Optional<Versioned<TenantPlacement>> p = store.placement(move.getTenantId());
        if (p.isPresent() && p.get().value().getMoveId().equals(move.getMoveId())) {
            if (!p.get().value().getCell().equals(move.getToCell())) {
                throw new TenantShards.StepFailed("tenant " + move.getTenantId() + " names the move but lives in "
                        + p.get().value().getCell() + ", not " + move.getToCell());
            }
            cas(() -> store.setTenantState(move.getTenantId(), TenantState.ACTIVE, "", p.get().version()));
        }
    }

    private void rollBack(Run r, Move move) throws InterruptedException {
        Optional<Versioned<TenantPlacement>> p = store.placement(move.getTenantId());
        if (p.isPresent() && p.get().value().getMoveId().equals(move.getMoveId())) {
            if (!p.get().value().getCell().equals(move.getFromCell())) {
                throw new TenantShards.StepFailed("tenant " + move.getTenantId() + " lives in "
                        + p.get().value().getCell() + ": the move flipped and cannot roll back");
            }
            cas(() -> store.setTenantState(move.getTenantId(), TenantState.ACTIVE, "", p.get().version()));
        }
        shards.unfreeze(r.sources, r.request, r::check);
        shards.drop(r.targets, r.request, DropState.IMPORTING, r::check);
    }

    /** Waits (bounded) until the tenant has no PENDING transfer on the source; the facts with what is left. */
    private MoveFacts waitForTransfers(Run r, MoveFacts facts) throws InterruptedException {
        long deadline = System.nanoTime() + settings.transferWaitMax().toNanos();
        long pending;
        try {
            while (true) {
                pending = pendingTransfers(r, TenantShards.NO_DEADLINE);
                if (pending == 0 || System.nanoTime() - deadline >= 0) {
                    break;
                }
                Thread.sleep(settings.transferPoll().toMillis());
            }
        } catch (TenantShards.StepFailed e) {
            return MoveFacts.failed(clock.millis(), e.getMessage());
        }
        return facts.afterWait(clock.millis(), pending);
    }

    private long pendingTransfers(Run r, long deadline) throws InterruptedException {
        long pending = 0;
        for (TenantSummary s : shards.summarize(r.sources, r.request.getTenantId(), r::check, deadline)) {
            for (ItemSummary i : s.getItemsList()) {
                pending += i.getTransfersPending();
            }
        }
        return pending;
    }

    /** When the pause budget of a fenced move runs out, as a {@link System#nanoTime()} deadline. */
    private long budgetDeadline(Move move) {
        long leftMs = move.getMaxPauseMs() - Math.max(0, clock.millis() - move.getFencedAtMs());
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, leftMs));
    }

    private Versioned<TenantPlacement> placement(Move move) {
        Versioned<TenantPlacement> p = store.placement(move.getTenantId()).orElseThrow(() ->
                new TenantShards.StepFailed("tenant " + move.getTenantId() + " has no placement; move "
                        + move.getMoveId() + " recorded one"));
        if (!p.value().getMoveId().equals(move.getMoveId())) {
            throw new TenantShards.StepFailed("tenant " + move.getTenantId() + " names move '" + p.value().getMoveId()
                    + "', not " + move.getMoveId());
        }
        return p;
    }

    private static void cas(Runnable write) {
        try {
            write.run();
        } catch (ConcurrentModificationException e) {
            throw new TenantShards.StepFailed(e.getMessage());
        }
    }

    private Move.Builder stamp(Move.Builder b) {
        return b.setUpdatedAtMs(clock.millis()).setOwner(owner);
    }

    /** The move with the step the decision records, and what the step just carried out measured. */
    private Move next(Move move, MoveDecision d, StepResult res) {
        Move.Builder b = stamp(move.toBuilder()).setStep(d.action().step());
        if (res != null && res.copied() != null) {
            b.setCopied(CopyPass.add(move.getCopied(), res.copied()));
            b.setLastDeltaRows(res.facts().lastDeltaRows());
        }
        switch (d.action()) {
            case CATCH_UP:
                b.setCatchUpRounds(move.getCatchUpRounds() + 1);
                break;
            case FENCE:
                b.setFencedAtMs(clock.millis()).setFencedEpoch(move.getPlannedEpoch() + 1);
                break;
            case FLIP:
                b.setFlippedAtMs(clock.millis());
                break;
            case CLEAN:
                b.setPauseMs(res == null ? 0 : res.pauseMs());
                break;
            case ABORT:
                b.setReason(d.reason());
                break;
            default:
                break;
        }
        return b.build();
    }

    private Move finish(Move move) {
        Move.Builder b = stamp(move.toBuilder()).setFinishedAtMs(clock.millis());
        if (move.getStep() == MoveStep.ABORTING) {
            b.setStep(MoveStep.ABORTED);
        }
        return b.build();
    }

    private static Outcome outcome(Move move) {
        Result r = move.getStep() == MoveStep.ABORTED ? Result.ABORTED : Result.CLEANED;
        String detail = r == Result.CLEANED ? "moved to " + move.getToCell() + " (pause " + move.getPauseMs() + " ms)"
                : "rolled back: " + move.getReason();
        return new Outcome(r, move, detail);
    }

    /** A write of the move lost to another writer that did more than ask for an abort. */
    private static final class Stale extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stale(String message) {
            super(message, null, false, false);
        }
    }

    /** An abort was requested while a step ran: the step stops, the move (read fresh) aborts. */
    private static final class AbortSeen extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient Versioned<Move> fresh;

        AbortSeen(Versioned<Move> fresh) {
            super("abort requested", null, false, false);
            this.fresh = fresh;
        }
    }

    /** One run's state: the lease, the move as last read or written, the shards, the snapshots and cuts. */
    private final class Run implements AutoCloseable {
        final MoveLease lease;
        final Consumer<Move> progress;
        final Map<String, CopyPass.Since> snapshots = new HashMap<>();
        /** The settled figures read before this run fenced the move, or null (verification reads everything). */
        Baseline baseline;
        volatile Versioned<Move> m;
        /**
         * This run's fencing token, sent with every shard call that writes: the move znode's
         * version after this run adopted the move. Every write bumps the version, so a mover that
         * adopts the move later has a higher one; the shards refuse a call with a lower token than
         * they have seen (MOVE_SUPERSEDED).
         */
        long token;
        List<ShardInfo> sources = List.of();
        List<ShardInfo> targets = List.of();
        Map<String, List<ShardInfo>> targetsByRegion = Map.of();
        TenantMoveRequest request;
        ExecutorService pool;
        private long lastPollNanos = System.nanoTime();

        Run(MoveLease lease, Consumer<Move> progress) {
            this.lease = lease;
            this.progress = progress;
        }

        Move current() {
            return m == null ? null : m.value();
        }

        void resolveShards() {
            Move move = m.value();
            sources = store.shards(move.getFromCell());
            targets = store.shards(move.getToCell());
            Map<String, List<ShardInfo>> byRegion = new LinkedHashMap<>();
            for (ShardInfo s : targets) {
                byRegion.computeIfAbsent(s.getRegion(), k -> new ArrayList<>()).add(s);
            }
            targetsByRegion = byRegion;
            request = TenantMoveRequest.newBuilder().setTenantId(move.getTenantId()).setMoveId(move.getMoveId())
                    .setMoverToken(token).build();
            AtomicInteger n = new AtomicInteger();
            int threads = Math.max(1, Math.min(settings.copyThreads(), sources.size()));
            pool = Executors.newFixedThreadPool(threads, task -> {
                Thread t = new Thread(task, "mover-" + move.getMoveId() + "-copy-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }

        void check() {
            lease.check();
        }

        /** Between chunks of a pass: the lease, and (at most every abortPoll) an abort requested since. */
        synchronized void checkpoint() {
            lease.check();
            long now = System.nanoTime();
            if (now - lastPollNanos < settings.abortPoll().toNanos()) {
                return;
            }
            lastPollNanos = now;
            Optional<Versioned<Move>> fresh = store.move(m.value().getMoveId());
            if (fresh.isPresent() && fresh.get().value().getAbortRequested() && !m.value().getAbortRequested()
                    && MovePlanner.beforeCommitPoint(fresh.get().value().getStep())) {
                throw new AbortSeen(fresh.get());
            }
        }

        /**
         * Writes the move by compare-and-set. A write lost to an abort request (same step, same
         * owner) adopts the request: {@link AbortSeen}; lost to anything else: {@link Stale}.
         */
        void record(Move next) {
            lease.check();
            try {
                int v = store.updateMove(next, m.version());
                m = new Versioned<>(next, v);
            } catch (ConcurrentModificationException e) {
                Optional<Versioned<Move>> fresh = store.move(next.getMoveId());
                if (fresh.isPresent() && fresh.get().value().getStep() == m.value().getStep()
                        && fresh.get().value().getOwner().equals(m.value().getOwner())
                        && fresh.get().value().getAbortRequested() && !m.value().getAbortRequested()) {
                    throw new AbortSeen(fresh.get());
                }
                throw new Stale("move " + next.getMoveId() + " changed under this mover (" + e.getMessage()
                        + "); another mover has it");
            }
        }

        @Override
        public void close() {
            if (pool != null) {
                pool.shutdownNow();
            }
            lease.close();
        }
    }
}
