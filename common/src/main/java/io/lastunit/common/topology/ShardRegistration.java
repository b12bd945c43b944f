package io.lastunit.common.topology;

import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.common.Limits;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running shard node's ephemeral {@code live/{shard}} znode holding its {@link LiveShard} as
 * JSON, kept by Curator's {@link PersistentNode} recipe: re-created after a session loss, after
 * a delete, and on every reconnect. Lifecycle LATENT → STARTED → CLOSED; {@link #close()} is
 * idempotent and removes the znode (the session's end would remove it too).
 *
 * <p>Thread-safe. Hazards: the recipe treats an existing znode as its own and overwrites its
 * data. That is what a restarted node needs (its previous session's znode lingers until that
 * session times out, then disappears, then is re-created), but it also means two processes
 * started with one shard id both believe they are registered; that deployment error must be
 * fenced where the stock is (one writer per shard database), not here. Liveness is advice for
 * routing and the balancer, never a lock. And this is the one znode written without a
 * compare-and-set: it belongs to one session and carries no decision.
 */
public final class ShardRegistration implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShardRegistration.class);

    private enum State { LATENT, STARTED, CLOSED }

    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private final String path;
    private final PersistentNode node;

    /**
     * @param client started by the caller, who closes it after this registration
     * @param root   the topology namespace root, e.g. {@value TopologyStore#ROOT_DEFAULT}
     * @param live   this node's shard id (a name of 1..64 printable ASCII characters) and address
     */
    public ShardRegistration(CuratorFramework client, String root, LiveShard live) {
        if (!TopologyPaths.isName(live.getShardId())) {
            throw new IllegalArgumentException("shard id '" + live.getShardId() + "' is not a name of 1.."
                    + TopologyPaths.NAME_LENGTH_MAX + " printable ASCII characters without '/'");
        }
        if (!Limits.isId(live.getAddress(), TopologyStore.ADDRESS_LENGTH_MAX)) {
            throw new IllegalArgumentException("shard " + live.getShardId() + ": address '" + live.getAddress()
                    + "' is not 1.." + TopologyStore.ADDRESS_LENGTH_MAX + " printable ASCII characters");
        }
        this.path = new TopologyPaths(root).live(live.getShardId());
        this.node = new PersistentNode(client, CreateMode.EPHEMERAL, false, path, TopologyCodec.encode(live));
    }

    /** The znode a node of {@code shardId} registers at, under the namespace {@code root}. */
    public static String pathOf(String root, String shardId) {
        return new TopologyPaths(root).live(shardId);
    }

    /** Starts creating the znode in the background; see {@link #awaitRegistered}. */
    public void start() {
        if (!state.compareAndSet(State.LATENT, State.STARTED)) {
            throw new IllegalStateException("registration " + path + " is " + state.get() + ", not LATENT");
        }
        node.start();
    }

    /**
     * Waits up to {@code max} for the first create (or adoption) of the znode.
     *
     * @return true once registered; false on timeout or interrupt (the flag is restored)
     */
    public boolean awaitRegistered(Duration max) {
        if (state.get() != State.STARTED) {
            throw new IllegalStateException("registration " + path + " is " + state.get() + ", not STARTED");
        }
        try {
            return node.waitForInitialCreate(max.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The znode path, {@code {root}/live/{shard}}. */
    public String path() {
        return path;
    }

    /** Deletes the znode (Curator keeps trying in the background if ZooKeeper is away). Idempotent. */
    @Override
    public void close() {
        if (state.getAndSet(State.CLOSED) != State.STARTED) {
            return;
        }
        try {
            node.close();
        } catch (IOException | RuntimeException e) {
            // Best effort: a guaranteed delete is retried in the background, and the end of the
            // session (the client closed first, say) removes an ephemeral znode anyway.
            log.warn("registration {}: delete on close failed, left to Curator and the session: {}", path, e.toString());
        }
    }
}
