package io.lastunit.balancer.leader;

import io.lastunit.balancer.transfer.Fence;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This balancer's part in the election (DESIGN §3, §7): a Curator {@link LeaderLatch} at
 * {@code {namespace}/balancer/leader} with this process's address as participant id.
 *
 * <p>States: STANDBY → (latch won) RECOVERING → SERVING → (latch lost, connection SUSPENDED or
 * LOST) STANDBY → … → CLOSED. On winning, {@link Duties#recover} runs (on this class's own thread)
 * until every PENDING transfer is completed; only then is {@code host:port} published in the
 * ephemeral znode {@code {namespace}/balancer/endpoint} and the state SERVING. Each win opens a new
 * term; a {@link Fence} belongs to one term and closes the moment leadership is lost, so transfer
 * steps stop at once; the endpoint is then deleted (if it is still this session's).
 *
 * <p>Connection states follow Curator's contract: SUSPENDED already fences (we may have lost the
 * session without knowing), LOST too; the latch re-runs the election after RECONNECTED and a win
 * starts a new term with a new recovery.
 *
 * <p>Thread-safe. Hazard: the fence is advice from ZooKeeper, not a lock on the shards. Two
 * processes may briefly both believe they lead (a paused old leader); the transfer protocol is
 * idempotent per transfer id, so that costs duplicate work, never units.
 */
public final class Leadership implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Leadership.class);
    /** Longest wait between two recovery or publication attempts. */
    static final Duration RETRY_MAX = Duration.ofSeconds(5);

    public enum State { LATENT, STANDBY, RECOVERING, SERVING, CLOSED }

    /** What a new leader must do before it serves. */
    @FunctionalInterface
    public interface Duties {
        /**
         * Completes every PENDING OUT transfer it can find, under {@code fence}.
         *
         * @return true when every one was completed (false: try again after a pause)
         */
        boolean recover(Fence fence) throws InterruptedException;
    }

    private final CuratorFramework client;
    private final String endpointPath;
    private final String address;
    private final Duties duties;
    private final Consumer<State> onState;
    private final Duration retryBase;
    private final LeaderLatch latch;
    private final ExecutorService worker;
    private final AtomicLong terms = new AtomicLong();
    private final ConnectionStateListener connectionListener = (c, s) -> onConnectionState(s);
    private volatile long activeTerm;
    private volatile State state = State.LATENT;

    /**
     * @param client    started by the caller, who closes it after this
     * @param namespace the topology root, e.g. {@code /lastunit}
     * @param address   this balancer's {@code host:port}: participant id and published endpoint
     * @param onState   told every state this enters (keep it short: it runs under this object's lock)
     * @param retryBase first pause between recovery attempts; doubles up to {@link #RETRY_MAX}
     */
    public Leadership(CuratorFramework client, String namespace, String address, Duties duties,
            Consumer<State> onState, Duration retryBase) {
        this.client = client;
        this.endpointPath = namespace + "/balancer/endpoint";
        this.address = address;
        this.duties = duties;
        this.onState = onState;
        this.retryBase = retryBase;
        this.latch = new LeaderLatch(client, namespace + "/balancer/leader", address, LeaderLatch.CloseMode.SILENT);
        this.worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "balancer-leadership");
            t.setDaemon(true);
            return t;
        });
    }

    public synchronized void start() throws Exception {
        if (state != State.LATENT) {
            throw new IllegalStateException("leadership of " + address + " is " + state);
        }
        enter(State.STANDBY);
        client.getConnectionStateListenable().addListener(connectionListener);
        latch.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                onElected();
            }

            @Override
            public void notLeader() {
                fence("leadership lost");
            }
        });
        latch.start();
    }

    public State state() {
        return state;
    }

    /** Leading and done recovering: the balancing loop, pulls and the invariant check may act. */
    public boolean isServing() {
        return state == State.SERVING;
    }

    /** A fence for the current term when SERVING; empty otherwise. */
    public Optional<Fence> servingFence() {
        long term = activeTerm;
        if (state != State.SERVING || term == 0) {
            return Optional.empty();
        }
        return Optional.of(fenceFor(term, true));
    }

    public String address() {
        return address;
    }

    private Fence fenceFor(long term, boolean serving) {
        return () -> {
            State s = state;
            if (activeTerm != term || (serving ? s != State.SERVING : s != State.RECOVERING && s != State.SERVING)) {
                throw Failure.retryable(Reason.NOT_LEADER, "balancer " + address + " no longer leads (term " + term
                        + ", now " + s + ")", Duration.ofMillis(500));
            }
        };
    }

    private synchronized void onElected() {
        if (state == State.CLOSED) {
            return;
        }
        long term = terms.incrementAndGet();
        activeTerm = term;
        enter(State.RECOVERING);
        log.info("balancer {} elected (term {}): completing PENDING transfers before serving", address, term);
        worker.execute(() -> activate(term));
    }

    private void activate(long term) {
        Fence fence = fenceFor(term, false);
        Duration pause = retryBase;
        try {
            while (true) {
                try {
                    fence.check();
                    if (duties.recover(fence)) {
                        publish(term);
                        break;
                    }
                } catch (Failure f) {
                    if (f.reason() == Reason.NOT_LEADER) {
                        return;
                    }
                    log.warn("balancer {} (term {}): recovery attempt failed: {} {}", address, term, f.reason(),
                            f.getMessage());
                } catch (RuntimeException e) {
                    log.warn("balancer {} (term {}): recovery or publication failed; trying again", address, term, e);
                }
                Thread.sleep(pause.toMillis());
                pause = pause.multipliedBy(2).compareTo(RETRY_MAX) > 0 ? RETRY_MAX : pause.multipliedBy(2);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        synchronized (this) {
            if (activeTerm == term && state == State.RECOVERING) {
                enter(State.SERVING);
                log.info("balancer {} leads (term {}), endpoint {} published", address, term, endpointPath);
                return;
            }
        }
        withdraw(); // lost it while publishing
    }

    /** Creates the ephemeral endpoint, replacing a stale one of another session (we lead now). */
    private void publish(long term) {
        byte[] data = address.getBytes(StandardCharsets.UTF_8);
        for (int attempt = 1; ; attempt++) {
            fenceFor(term, false).check();
            try {
                client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(endpointPath, data);
                return;
            } catch (KeeperException.NodeExistsException e) {
                replaceStale(data, attempt);
            } catch (Exception e) {
                throw new IllegalStateException("cannot publish " + endpointPath + ": " + e, e);
            }
        }
    }

    private void replaceStale(byte[] data, int attempt) {
        try {
            Stat stat = client.checkExists().forPath(endpointPath);
            if (stat == null) {
                return;
            }
            if (stat.getEphemeralOwner() == sessionId()) {
                client.setData().withVersion(stat.getVersion()).forPath(endpointPath, data);
                return;
            }
            if (attempt > 3) {
                throw new IllegalStateException(endpointPath + " keeps being re-created by another session");
            }
            client.delete().withVersion(stat.getVersion()).forPath(endpointPath);
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
            // changed under us: the caller tries the create again
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot replace " + endpointPath + ": " + e, e);
        }
    }

    private long sessionId() throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    private synchronized void enter(State next) {
        state = next;
        try {
            onState.accept(next);
        } catch (RuntimeException e) {
            log.warn("balancer {}: state listener failed on {}", address, next, e);
        }
    }

    private synchronized void fence(String why) {
        if (state == State.CLOSED || state == State.STANDBY || state == State.LATENT) {
            return;
        }
        long was = activeTerm;
        activeTerm = 0;
        enter(State.STANDBY);
        log.warn("balancer {} stops moving stock (term {}): {}", address, was, why);
        worker.execute(this::withdraw);
    }

    /** Deletes the endpoint if this session owns it; best effort (a lost session removed it anyway). */
    private void withdraw() {
        try {
            Stat stat = client.checkExists().forPath(endpointPath);
            if (stat != null && stat.getEphemeralOwner() == sessionId()) {
                client.delete().withVersion(stat.getVersion()).forPath(endpointPath);
                log.info("balancer {} withdrew endpoint {}", address, endpointPath);
            }
        } catch (Exception e) {
            log.info("balancer {}: endpoint {} not withdrawn ({}); it goes with the session", address, endpointPath,
                    e.toString());
        }
    }

    private void onConnectionState(ConnectionState s) {
        if (s == ConnectionState.SUSPENDED || s == ConnectionState.LOST) {
            fence("ZooKeeper connection " + s);
        } else if (s == ConnectionState.RECONNECTED && state == State.STANDBY) {
            worker.execute(this::withdraw); // an endpoint left over from before the suspension
        }
    }

    /** Leaves the election: fences, deletes the endpoint and the latch node. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (state == State.CLOSED) {
                return;
            }
            boolean wasLeading = state == State.RECOVERING || state == State.SERVING;
            activeTerm = 0;
            enter(State.CLOSED);
            client.getConnectionStateListenable().removeListener(connectionListener);
            if (wasLeading) {
                log.info("balancer {} leaves leadership (closing)", address);
            }
        }
        worker.shutdownNow();
        try {
            worker.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        withdraw();
        try {
            latch.close();
        } catch (Exception e) {
            log.info("balancer {}: leader latch did not close cleanly: {}", address, e.toString());
        }
    }
}
