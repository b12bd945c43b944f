package io.lastunit.common.topology;

import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The right to act on one tenant move: the ephemeral znode {@code moves/{id}/lease}, holding the
 * owner's name as text. Exactly one ZooKeeper session can hold it; when that session ends (the
 * mover crashed, or was cut off long enough for the session to expire), ZooKeeper removes the
 * znode and another mover may take the move over and resume it.
 *
 * <p>Curator's connection-state contract, as {@code LeaderLatch} follows it: from SUSPENDED on the
 * holder must assume it has lost the lease (the session may expire at any moment and another
 * mover take over), so {@link #check()} refuses from the first SUSPENDED or LOST, for good. The
 * mover calls it before every action on a shard and every write of the move.
 *
 * <p>Thread-safe. Hazard: a lease is advice between well-behaved movers, not a fence at the shards.
 * A shard call already in flight when the connection drops still lands. That is why every write
 * of the move is also a compare-and-set on its version (a stale mover fails at its next write and
 * stops), why every shard action of a move is idempotent, and why every shard call that writes
 * carries the mover's token (the move's version after the mover adopted it), which the shard
 * checks in the call's own transaction: once a newer mover has called a shard, an older one's
 * calls there are refused (docs/moves.md).
 */
public final class MoveLease implements AutoCloseable {
    private final CuratorFramework client;
    private final String path;
    private final String owner;
    private final long sessionId;
    private final ConnectionStateListener listener = (c, state) -> onState(state);
    private volatile String lost;
    private volatile boolean closed;

    private MoveLease(CuratorFramework client, String path, String owner, long sessionId) {
        this.client = client;
        this.path = path;
        this.owner = owner;
        this.sessionId = sessionId;
    }

    /**
     * Takes the lease of move {@code moveId} for {@code owner} (for people: host:pid, a service
     * id), unless another session holds it.
     *
     * @return the lease, or empty when another session holds it
     * @throws IllegalArgumentException for a bad move id or an empty owner
     * @throws IllegalStateException when the move does not exist
     * @throws Failure TOPOLOGY_UNAVAILABLE when ZooKeeper cannot be reached
     */
    public static Optional<MoveLease> tryAcquire(CuratorFramework client, String root, String moveId, String owner) {
        TopologyPaths paths = new TopologyPaths(root);
        if (!TopologyPaths.isName(moveId)) {
            throw new IllegalArgumentException("move id '" + moveId + "' is not a name");
        }
        if (owner == null || owner.isBlank()) {
            throw new IllegalArgumentException("a lease needs an owner");
        }
        String path = paths.moveLease(moveId);
        try {
            long session = client.getZookeeperClient().getZooKeeper().getSessionId();
            MoveLease lease = new MoveLease(client, path, owner, session);
            // Listen first: a suspension between the create and the listener would go unseen.
            client.getConnectionStateListenable().addListener(lease.listener);
            try {
                client.create().withMode(CreateMode.EPHEMERAL).forPath(path, owner.getBytes(StandardCharsets.UTF_8));
                return Optional.of(lease);
            } catch (KeeperException.NodeExistsException e) {
                Stat stat = client.checkExists().forPath(path);
                if (stat != null && stat.getEphemeralOwner() == session) {
                    return Optional.of(lease); // our own create, applied before a connection loss and retried
                }
                lease.stopListening();
                return Optional.empty();
            } catch (KeeperException.NoNodeException e) {
                lease.stopListening();
                throw new IllegalStateException("move " + moveId + " does not exist (" + paths.move(moveId) + ")");
            } catch (Exception | Error e) {
                lease.stopListening();
                throw e;
            }
        } catch (KeeperException.ConnectionLossException | KeeperException.SessionExpiredException
                | KeeperException.OperationTimeoutException e) {
            throw unavailable("lease of move " + moveId + ": " + e.code() + " (a lease may or may not have been taken;"
                    + " it goes with this session)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable("lease of move " + moveId + ": interrupted");
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("lease of move " + moveId + ": " + e, e);
        }
    }

    /** Who holds the lease of {@code moveId} now (the owner it was taken for), if anyone. */
    public static Optional<String> holder(CuratorFramework client, String root, String moveId) {
        String path = new TopologyPaths(root).moveLease(moveId);
        try {
            return Optional.of(new String(client.getData().forPath(path), StandardCharsets.UTF_8));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable("lease of move " + moveId + ": interrupted");
        } catch (KeeperException e) {
            throw unavailable("lease of move " + moveId + ": " + e.code());
        } catch (Exception e) {
            throw new IllegalStateException("lease of move " + moveId + ": " + e, e);
        }
    }

    public String owner() {
        return owner;
    }

    /**
     * Refuses once the lease may have been lost: after the first SUSPENDED or LOST of the
     * connection, and after {@link #close()}.
     *
     * @throws Failure TOPOLOGY_UNAVAILABLE naming why: stop acting on the move (another mover resumes it)
     */
    public void check() {
        String why = closed ? "released" : lost;
        if (why != null) {
            throw unavailable("lease " + path + " of " + owner + " " + why + "; stop acting on the move");
        }
    }

    /** Gives the lease up: deletes the znode if this session still holds it. Idempotent; never throws. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopListening();
        try {
            Stat stat = client.checkExists().forPath(path);
            if (stat != null && stat.getEphemeralOwner() == sessionId) {
                client.delete().withVersion(stat.getVersion()).forPath(path);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // The session's end removes it; nothing else to do.
        }
    }

    private void stopListening() {
        client.getConnectionStateListenable().removeListener(listener);
    }

    private void onState(ConnectionState state) {
        if ((state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) && lost == null) {
            lost = "lost: ZooKeeper connection " + state;
        }
    }

    private static Failure unavailable(String message) {
        return Failure.retryable(Reason.TOPOLOGY_UNAVAILABLE, message, StalenessGate.RETRY_AFTER);
    }

    @Override
    public String toString() {
        return "MoveLease{" + path + ", owner=" + Objects.toString(owner) + "}";
    }
}
