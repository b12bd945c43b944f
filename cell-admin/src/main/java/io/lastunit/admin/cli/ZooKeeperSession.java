package io.lastunit.admin.cli;

import io.lastunit.common.Failure;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import io.lastunit.common.topology.TopologyStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The admin's connection to the topology: a Curator client, a {@link TopologyStore} for reads
 * with versions and for writes, and (on first use) a {@link TopologyCache} snapshot, which also
 * knows which shards are live. Every failure becomes a {@link CliError} with a clear message.
 * Not thread-safe; close it last.
 */
final class ZooKeeperSession implements AutoCloseable {
    /** How long to wait for the first connection before giving up. */
    static final Duration CONNECT_MAX = Duration.ofSeconds(10);

    private final String connect;
    private final String namespace;
    private final CuratorFramework client;
    private final TopologyStore store;
    private TopologyCache cache;

    private ZooKeeperSession(String connect, String namespace, CuratorFramework client) {
        this.connect = connect;
        this.namespace = namespace;
        this.client = client;
        this.store = new TopologyStore(client, namespace, InstantSource.system());
    }

    /**
     * Connects, or fails with exit code 3 when ZooKeeper does not answer within {@link #CONNECT_MAX}.
     */
    static ZooKeeperSession open(String connect, String namespace) {
        return open(connect, namespace, null, null);
    }

    /**
     * As {@link #open(String, String)}, authenticated with {@code credentials} (null: none), over TLS
     * with {@code tls} (null: plaintext).
     */
    static ZooKeeperSession open(String connect, String namespace, io.lastunit.common.topology.ZooKeeperCredentials credentials,
            io.lastunit.common.tls.ZooKeeperTls tls) {
        CuratorFramework client;
        try {
            // Few retries: an operator at a terminal wants an answer, not a minute of backoff.
            client = Curators.newClient(connect, Duration.ofSeconds(15), Duration.ofSeconds(5),
                    new ExponentialBackoffRetry(100, 3, 1_000), credentials, tls);
            client.start();
        } catch (IllegalArgumentException e) {
            throw CliError.usage("--zookeeper '" + connect + "': " + e.getMessage());
        }
        boolean connected;
        try {
            connected = client.blockUntilConnected((int) CONNECT_MAX.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            connected = false;
        }
        if (!connected) {
            client.close();
            throw CliError.unreachable("cannot reach ZooKeeper at " + connect + " within " + CONNECT_MAX.toSeconds()
                    + " s (is './lastunit up' running? it prints its ZooKeeper address"
                    + (tls == null ? "; a secure one serves TLS only: pass --secure-dir DIR of './lastunit up --secure',"
                    + " or --zookeeper-tls-cert/-key/-ca" : "; over TLS: check the certificate and its CA") + ")");
        }
        try {
            // A platform with ACLs answers a reader without its credentials NoAuth; the topology
            // cache would show that as an empty platform, so ask once here and say so.
            client.getChildren().forPath(namespace);
        } catch (org.apache.zookeeper.KeeperException.NoAuthException e) {
            client.close();
            throw CliError.usage("ZooKeeper at " + connect + " refuses " + namespace + " (NoAuth): the platform has"
                    + " ACLs; pass its credentials (--zookeeper-credentials USER:PASSWORD, or --secure-dir DIR of"
                    + " './lastunit up --secure')");
        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
            // an empty ensemble: the commands say there is nothing there
        } catch (IllegalArgumentException e) {
            client.close();
            throw CliError.usage("--namespace '" + namespace + "': " + e.getMessage());
        } catch (Exception e) {
            client.close();
            throw CliError.unreachable("ZooKeeper at " + connect + ": " + e.getMessage());
        }
        try {
            return new ZooKeeperSession(connect, namespace, client);
        } catch (IllegalArgumentException e) {
            client.close();
            throw CliError.usage("--namespace '" + namespace + "': " + e.getMessage());
        }
    }

    String connect() {
        return connect;
    }

    String namespace() {
        return namespace;
    }

    TopologyStore store() {
        return store;
    }

    /** The session's Curator client (for a mover's lease). */
    CuratorFramework client() {
        return client;
    }

    /** The topology as the routers see it (cells, shards, live shards, tenants), read once. */
    Topology snapshot() {
        if (cache == null) {
            TopologyCache c = new TopologyCache(client, namespace, Duration.ofSeconds(10), InstantSource.system());
            try {
                c.start(Duration.ofSeconds(15));
            } catch (Failure f) {
                throw CliError.unreachable("ZooKeeper at " + connect + ": " + f.getMessage());
            } catch (IllegalStateException e) {
                throw CliError.failed("the topology under " + namespace + " at " + connect + " is refused: " + e.getMessage());
            }
            cache = c;
        }
        try {
            return cache.current();
        } catch (Failure f) {
            throw CliError.unreachable("ZooKeeper at " + connect + ": " + f.getMessage());
        }
    }

    /**
     * Runs a {@link TopologyStore} call, turning its documented failures into {@link CliError}s:
     * unreachable (3), invalid or refused (2), a concurrent change (1: run again).
     */
    <T> T call(Supplier<T> call) {
        try {
            return call.get();
        } catch (Failure f) {
            throw CliError.unreachable("ZooKeeper at " + connect + ": " + f.getMessage());
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw CliError.usage(e.getMessage());
        } catch (ConcurrentModificationException e) {
            throw CliError.failed(e.getMessage() + " (someone changed the topology meanwhile; run the command again)");
        }
    }

    @Override
    public void close() {
        if (cache != null) {
            cache.close();
        }
        client.close();
    }
}
