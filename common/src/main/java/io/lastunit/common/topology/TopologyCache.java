package io.lastunit.common.topology;

import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watched, cached topology that routers, shard nodes and the balancer read on every
 * request: a {@link CuratorCache} over the namespace root, turned into an immutable
 * {@link Topology} snapshot after every change under {@code cells/}, {@code live/} or
 * {@code tenants/}. Lifecycle LATENT → STARTED → CLOSED; {@link #close()} is idempotent.
 *
 * <p>Connection states are a contract ({@link StalenessGate}):
 * <ul>
 *   <li>CONNECTED / RECONNECTED: {@link #current()} serves the snapshot. On RECONNECTED the
 *       CuratorCache resyncs (re-reads every node it holds and the children of changed ones),
 *       and each change it finds rebuilds the snapshot.
 *   <li>SUSPENDED: the last snapshot is served for at most {@code staleMax}, measured on the
 *       injected clock; after that {@link #current()} throws {@link Failure} with
 *       {@link Reason#TOPOLOGY_UNAVAILABLE} and a retry hint.
 *   <li>LOST: refused at once, until RECONNECTED.
 * </ul>
 *
 * <p>Thread-safe: the snapshot is one volatile reference; rebuilds and listeners run on
 * Curator's single event thread, in order. A rebuild copies every cached node, so it costs
 * O(cells + shards + tenants) per change; the initial load builds once, not per node.
 *
 * <p>Hazards. (1) Right after RECONNECTED the snapshot may lag the store until the resync has
 * read the changes; every decision carries the tenant's epoch so a shard node can refuse a stale
 * one (MOVED). (2) A value that does not parse, or a snapshot that breaks an invariant (someone
 * wrote a znode by hand), is not applied: the last good snapshot stays, {@link #rejected()}
 * counts it and the problem is logged at ERROR; at start it fails {@link #start}. Serving an old
 * snapshot is fenced by epochs; dropping a tenant's placement would silently send it to the
 * shared cell. (3) A cell is routable only once all of its shards are cached (see
 * {@link TopologyReader}).
 */
public final class TopologyCache implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TopologyCache.class);
    /** Longest staleMax accepted: beyond it, cached routing is from another era. */
    static final Duration STALE_MAX_LIMIT = Duration.ofMinutes(10);

    private enum State { LATENT, STARTED, CLOSED }

    private final CuratorFramework client;
    private final TopologyPaths paths;
    private final CuratorCache cache;
    private final StalenessGate gate;
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private final CopyOnWriteArrayList<Consumer<Topology>> listeners = new CopyOnWriteArrayList<>();
    private final CountDownLatch initialLoad = new CountDownLatch(1);
    private final AtomicLong changes = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final ConnectionStateListener connectionListener = (c, newState) -> onConnectionState(newState);
    /** Set on Curator's event thread once the initial load is done; events before it build nothing. */
    private volatile boolean loaded;
    private volatile Topology snapshot;
    private volatile String problem;

    /**
     * @param client   started by the caller, who closes it after this cache
     * @param root     the namespace root, e.g. {@value TopologyStore#ROOT_DEFAULT}
     * @param staleMax how long the last snapshot is served while the connection is SUSPENDED
     * @param clock    measures staleMax
     */
    public TopologyCache(CuratorFramework client, String root, Duration staleMax, InstantSource clock) {
        if (staleMax.isNegative() || staleMax.compareTo(STALE_MAX_LIMIT) > 0) {
            throw new IllegalArgumentException("staleMax=" + staleMax + " is outside [0, " + STALE_MAX_LIMIT + "]");
        }
        this.client = Objects.requireNonNull(client, "client");
        this.paths = new TopologyPaths(root);
        this.cache = CuratorCache.build(client, root);
        // Starts as connected: the initial load cannot finish without a connection, and every
        // later transition arrives through the listener registered before the cache starts.
        this.gate = new StalenessGate("topology root=" + root, staleMax, clock, true);
    }

    /**
     * Starts watching and waits up to {@code initialLoadMax} for the initial load.
     *
     * @throws Failure {@link Reason#TOPOLOGY_UNAVAILABLE} when the load does not finish in time
     *     (the cache is closed)
     * @throws IllegalStateException when the stored topology is refused (the cache is closed), or
     *     when this cache was started or closed before
     */
    public void start(Duration initialLoadMax) {
        if (!state.compareAndSet(State.LATENT, State.STARTED)) {
            throw new IllegalStateException("topology cache root=" + paths.root + " is " + state.get() + ", not LATENT");
        }
        client.getConnectionStateListenable().addListener(connectionListener);
        cache.listenable().addListener(new Listener());
        cache.start();
        boolean done;
        try {
            done = initialLoad.await(initialLoadMax.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            done = false;
        }
        if (!done) {
            close();
            throw Failure.retryable(Reason.TOPOLOGY_UNAVAILABLE, "topology root=" + paths.root
                    + ": initial load did not finish within " + initialLoadMax.toMillis() + " ms", StalenessGate.RETRY_AFTER);
        }
        if (snapshot == null) {
            String why = state.get() == State.CLOSED ? "closed while starting" : "refused: " + problem;
            close();
            throw new IllegalStateException("topology root=" + paths.root + " " + why);
        }
    }

    /**
     * The current snapshot.
     *
     * @throws Failure {@link Reason#TOPOLOGY_UNAVAILABLE} when ZooKeeper has been unreachable past
     *     the bound (see the class comment)
     * @throws IllegalStateException when the cache is not started or closed
     */
    public Topology current() {
        Topology t = snapshot;
        State s = state.get();
        if (s != State.STARTED || t == null) {
            throw new IllegalStateException("topology cache root=" + paths.root + " is " + s + ", not serving");
        }
        gate.check();
        return t;
    }

    /**
     * Calls {@code listener} with every new snapshot, on Curator's event thread, after the
     * snapshot is in place. Keep it short; an exception is logged and does not stop others.
     */
    public void addListener(Consumer<Topology> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** Snapshots built so far, the initial one included. */
    public long changes() {
        return changes.get();
    }

    /** Rebuilds refused so far because a value or the snapshot was invalid. */
    public long rejected() {
        return rejected.get();
    }

    /** The last connection state heard from Curator (CONNECTED until one is heard). */
    public ConnectionState connectionState() {
        return gate.state();
    }

    /**
     * How long ago this cache's view was last known current: zero while the ZooKeeper connection
     * is up (its watches deliver every change), else the time since the connection was first seen
     * down, whether the view is still served (SUSPENDED, within staleMax) or refused.
     */
    public Duration staleness() {
        return gate.staleness();
    }

    /** Stops watching and serving. Idempotent. */
    @Override
    public void close() {
        State previous = state.getAndSet(State.CLOSED);
        if (previous == State.CLOSED) {
            return;
        }
        client.getConnectionStateListenable().removeListener(connectionListener);
        if (previous == State.STARTED) {
            cache.close();
        }
        initialLoad.countDown();
    }

    private void onConnectionState(ConnectionState newState) {
        gate.onStateChanged(newState);
        if (newState != ConnectionState.CONNECTED && newState != ConnectionState.RECONNECTED) {
            log.warn("topology root={}: ZooKeeper connection {}", paths.root, newState);
        } else {
            log.info("topology root={}: ZooKeeper connection {}", paths.root, newState);
        }
    }

    private final class Listener implements CuratorCacheListener {
        @Override
        public void event(Type type, ChildData oldData, ChildData data) {
            if (loaded && isTopology(data != null ? data : oldData)) {
                rebuild();
            }
        }

        @Override
        public void initialized() {
            rebuild();
            loaded = true;
            initialLoad.countDown();
        }
    }

    private boolean isTopology(ChildData node) {
        String[] seg = node == null ? null : paths.relative(node.getPath());
        if (seg == null || seg.length < 2) {
            return false;
        }
        return seg[0].equals(TopologyPaths.CELLS) || seg[0].equals(TopologyPaths.LIVE)
                || seg[0].equals(TopologyPaths.TENANTS);
    }

    /** Synchronized although Curator calls it from one thread: the snapshot order must be the event order. */
    private synchronized void rebuild() {
        if (state.get() != State.STARTED) {
            return;
        }
        Topology next;
        try {
            List<ChildData> nodes = cache.stream().toList();
            next = TopologyReader.read(paths, nodes);
        } catch (IllegalArgumentException e) {
            rejected.incrementAndGet();
            problem = e.getMessage();
            log.error("topology root={}: snapshot refused, keeping the previous one ({} refused so far): {}",
                    paths.root, rejected.get(), e.getMessage());
            return;
        }
        snapshot = next;
        problem = null;
        changes.incrementAndGet();
        for (Consumer<Topology> l : listeners) {
            try {
                l.accept(next);
            } catch (RuntimeException e) {
                log.warn("topology root={}: listener {} failed", paths.root, l, e);
            }
        }
    }
}
