package io.lastunit.common.topology;

import io.lastunit.common.tls.ZooKeeperKeyStore;
import io.lastunit.common.tls.ZooKeeperTls;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;

/**
 * Builds the Curator clients lastunit services share, with every option that matters passed
 * explicitly rather than left to Curator's defaults. Stateless, thread-safe.
 *
 * <p>Hazard: each foreground call retries through {@link #RETRY_SLEEP_BASE}..{@link #RETRY_SLEEP_MAX}
 * for up to {@value #RETRIES_MAX} retries, each waiting up to the connection timeout, so a write
 * during an outage can block for about {@code RETRIES_MAX x (connectionTimeout + RETRY_SLEEP_MAX)}
 * before it fails. Keep foreground calls off request threads; the hot path reads {@link TopologyCache}.
 */
public final class Curators {
    /** The connection timeout of {@link #newClient(String, Duration)} unless the session timeout is shorter. */
    public static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration RETRY_SLEEP_BASE = Duration.ofMillis(100);
    public static final Duration RETRY_SLEEP_MAX = Duration.ofSeconds(2);
    public static final int RETRIES_MAX = 10;
    /** ZooKeeper refuses sessions outside 2..20 ticks; these bounds only catch unit mistakes. */
    static final Duration SESSION_TIMEOUT_MIN = Duration.ofMillis(100);
    static final Duration SESSION_TIMEOUT_MAX = Duration.ofMinutes(5);

    private Curators() {
    }

    /**
     * A client (not started) with the given session timeout, a connection timeout of
     * {@link #CONNECTION_TIMEOUT} or the session timeout when that is shorter, and exponential
     * backoff from {@link #RETRY_SLEEP_BASE} to {@link #RETRY_SLEEP_MAX} for {@value #RETRIES_MAX}
     * retries. Call {@code start()} and {@code blockUntilConnected(...)} before use; close it last.
     */
    public static CuratorFramework newClient(String connectString, Duration sessionTimeout) {
        return newClient(connectString, sessionTimeout, null);
    }

    /**
     * As {@link #newClient(String, Duration)}, authenticated with {@code credentials} and creating
     * every znode with their ACL ({@link ZooKeeperCredentials#acl()}); null: no credentials, open ACLs.
     */
    public static CuratorFramework newClient(String connectString, Duration sessionTimeout,
            ZooKeeperCredentials credentials) {
        return newClient(connectString, sessionTimeout, credentials, null);
    }

    /**
     * As {@link #newClient(String, Duration, ZooKeeperCredentials)}, over TLS with {@code tls} (null:
     * plaintext): see {@link #newClient(String, Duration, Duration, RetryPolicy, ZooKeeperCredentials, ZooKeeperTls)}.
     */
    public static CuratorFramework newClient(String connectString, Duration sessionTimeout,
            ZooKeeperCredentials credentials, ZooKeeperTls tls) {
        Duration connectionTimeout = sessionTimeout.compareTo(CONNECTION_TIMEOUT) < 0 ? sessionTimeout : CONNECTION_TIMEOUT;
        RetryPolicy retry = new ExponentialBackoffRetry(
                (int) RETRY_SLEEP_BASE.toMillis(), RETRIES_MAX, (int) RETRY_SLEEP_MAX.toMillis());
        return newClient(connectString, sessionTimeout, connectionTimeout, retry, credentials, tls);
    }

    /**
     * A client (not started) with everything explicit.
     *
     * <ul>
     *   <li>No namespace: paths are absolute; {@link TopologyStore} and friends take their root.
     *   <li>Default data is empty: Curator's default is the local IP address, which would land in
     *       every znode created without data (parents included).
     *   <li>No ensemble tracker: the connect string is configuration. The tracker would replace it
     *       with the ensemble's own view (IP addresses), which breaks when servers are rescheduled
     *       behind stable DNS names.
     *   <li>Not read-only capable: a partitioned server's data may be arbitrarily old.
     * </ul>
     *
     * @throws IllegalArgumentException when a timeout is out of range or connectionTimeout > sessionTimeout
     */
    public static CuratorFramework newClient(String connectString, Duration sessionTimeout, Duration connectionTimeout,
            RetryPolicy retryPolicy) {
        return newClient(connectString, sessionTimeout, connectionTimeout, retryPolicy, null);
    }

    /**
     * As {@link #newClient(String, Duration, Duration, RetryPolicy)}, with {@code credentials} (or
     * none when null): the session authenticates with them before its first request, and every
     * znode it creates, parents and recipes' nodes included, gets their ACL.
     */
    public static CuratorFramework newClient(String connectString, Duration sessionTimeout, Duration connectionTimeout,
            RetryPolicy retryPolicy, ZooKeeperCredentials credentials) {
        return newClient(connectString, sessionTimeout, connectionTimeout, retryPolicy, credentials, null);
    }

    /**
     * As {@link #newClient(String, Duration, Duration, RetryPolicy, ZooKeeperCredentials)}, and with
     * {@code tls} (null: plaintext) the client speaks TLS only, to ZooKeeper's secure client port:
     * Netty's client socket, its certificate and key from {@code tls}, the server's certificate
     * checked against {@code tls.ca()} and against the host it dials. The settings are this
     * client's own ({@link ZKClientConfig}), not JVM-wide system properties, so clients with and
     * without TLS can share a process.
     */
    public static CuratorFramework newClient(String connectString, Duration sessionTimeout, Duration connectionTimeout,
            RetryPolicy retryPolicy, ZooKeeperCredentials credentials, ZooKeeperTls tls) {
        if (connectString == null || connectString.isBlank()) {
            throw new IllegalArgumentException("connectString is empty");
        }
        Objects.requireNonNull(retryPolicy, "retryPolicy");
        if (sessionTimeout.compareTo(SESSION_TIMEOUT_MIN) < 0 || sessionTimeout.compareTo(SESSION_TIMEOUT_MAX) > 0) {
            throw new IllegalArgumentException("sessionTimeout=" + sessionTimeout + " is outside ["
                    + SESSION_TIMEOUT_MIN + ", " + SESSION_TIMEOUT_MAX + "]");
        }
        if (connectionTimeout.isNegative() || connectionTimeout.isZero() || connectionTimeout.compareTo(sessionTimeout) > 0) {
            throw new IllegalArgumentException("connectionTimeout=" + connectionTimeout
                    + " must be positive and at most sessionTimeout=" + sessionTimeout);
        }
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs((int) sessionTimeout.toMillis())
                .connectionTimeoutMs((int) connectionTimeout.toMillis())
                .retryPolicy(retryPolicy)
                .defaultData(new byte[0])
                .ensembleTracker(false)
                .canBeReadOnly(false);
        if (credentials != null) {
            b.authorization("digest", credentials.authBytes()).aclProvider(credentials.aclProvider());
        }
        java.util.concurrent.atomic.AtomicReference<CuratorFramework> built = new java.util.concurrent.atomic.AtomicReference<>();
        if (tls != null) {
            // The key store follows the certificate files for as long as the client is not closed.
            b.zkClientConfig(clientConfig(tls, ZooKeeperKeyStore.keep(tls, () -> built.get() == null
                    || built.get().getState() != org.apache.curator.framework.imps.CuratorFrameworkState.STOPPED)));
        }
        CuratorFramework client = b.build();
        built.set(client);
        return client;
    }

    /**
     * ZooKeeper's client TLS settings for {@code tls}, each given explicitly so that no
     * {@code zookeeper.ssl.*} system property of the JVM decides them.
     */
    static ZKClientConfig clientConfig(ZooKeeperTls tls, Path keyStore) {
        ZKClientConfig c = new ZKClientConfig();
        c.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNetty.class.getName());
        c.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        try (ClientX509Util x = new ClientX509Util()) {
            c.setProperty(x.getSslKeystoreLocationProperty(), keyStore.toString());
            c.setProperty(x.getSslKeystoreTypeProperty(), "PEM");
            c.setProperty(x.getSslKeystorePasswdProperty(), "");
            c.setProperty(x.getSslTruststoreLocationProperty(), tls.ca().getAbsolutePath());
            c.setProperty(x.getSslTruststoreTypeProperty(), "PEM");
            c.setProperty(x.getSslTruststorePasswdProperty(), "");
            c.setProperty(x.getSslHostnameVerificationEnabledProperty(), "true");
        }
        return c;
    }
}
