package io.lastunit.testkit.faults;

import io.lastunit.testkit.TestTimeouts;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An in-process TCP proxy between the code under test and a server (PostgreSQL, ZooKeeper, a shard
 * node), with toxics in the manner of Toxiproxy: {@link #cut()}, {@link #resetAll()},
 * {@link #blackhole()}, {@link #latency}, {@link #throttle}. Point the client at {@link #address()};
 * every toxic applies at once to the connections already open as well as to new ones, and stays
 * until it is cleared ({@link #clear}, {@link #restore()}).
 *
 * <p>Owns a listening socket on 127.0.0.1 (a free port), at most {@value #CONNECTIONS_MAX}
 * connections (or a lower limit given at start; more are accepted and closed at once) and their
 * threads: an accept loop plus two blocking pumps per connection, all named daemon threads starting
 * with {@link #threadNamePrefix()}.
 * Thread-safe: toxics are changed from any thread while traffic flows. {@link #close()} ends every
 * thread before it returns (or says which did not end).
 *
 * <p>A blackhole stalls bytes rather than dropping them, as a network partition does to TCP:
 * whatever was sent during the blackhole arrives, in order, after it is cleared, unless the
 * connection was closed first. A cut, a reset and the refusal of a connection close both sides
 * with an RST.
 *
 * <p>Hazard: the proxy only sees bytes, not messages: latency is per chunk read (one read may hold
 * several protocol messages, or part of one), and a cut in the middle of a message leaves the
 * server with a partial one, which is the point. A client that keeps its own keep-alive or timeout
 * sees a blackhole only when that fires; a test waiting on the client must bound its wait.
 */
public final class TcpProxy implements AutoCloseable {
    /**
     * Concurrent connections at most, the default and the highest limit a proxy takes; beyond its
     * limit new connections are accepted and closed at once.
     */
    public static final int CONNECTIONS_MAX = 1024;

    /** Bytes one pump reads at once. */
    public static final int BUFFER_BYTES = Pump.BUFFER_BYTES;

    /** The longest latency (and the widest jitter) a proxy accepts; longer is surely a mistake in units. */
    public static final Duration LATENCY_MAX = Duration.ofMinutes(5);

    /** How long {@link #close()} waits for the proxy's threads to end, before {@link TestTimeouts} scaling. */
    public static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    private static final int BACKLOG = 128;
    private static final long ACCEPT_ERROR_BACKOFF_MILLIS = 10;

    private final String name;
    private final InetSocketAddress upstream;
    private final int connectionsMax;
    private final ServerSocket server;
    private final Toxics toxics = new Toxics();
    private final ProxyCounters counters = new ProxyCounters();
    private final ProxyThreads threads;
    private final Set<ProxyConnection> connections = new HashSet<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private long nextConnectionId;

    private TcpProxy(String name, InetSocketAddress upstream, int connectionsMax, ServerSocket server) {
        this.name = name;
        this.upstream = upstream;
        this.connectionsMax = connectionsMax;
        this.server = server;
        this.threads = new ProxyThreads("tcp-proxy[" + name + "]-");
    }

    /**
     * Starts a proxy named {@code name} (for thread names and messages) that forwards to
     * {@code upstream}, taking up to {@link #CONNECTIONS_MAX} connections at once.
     *
     * @throws IOException if no port on 127.0.0.1 can be bound
     */
    public static TcpProxy start(String name, InetSocketAddress upstream) throws IOException {
        return start(name, upstream, CONNECTIONS_MAX);
    }

    /**
     * Starts a proxy that takes up to {@code connectionsMax} connections at once.
     *
     * @throws IllegalArgumentException if {@code connectionsMax} is not within [1, {@link #CONNECTIONS_MAX}]
     * @throws IOException if no port on 127.0.0.1 can be bound
     */
    public static TcpProxy start(String name, InetSocketAddress upstream, int connectionsMax) throws IOException {
        Objects.requireNonNull(name, "name");
        if (connectionsMax < 1 || connectionsMax > CONNECTIONS_MAX) {
            throw new IllegalArgumentException("proxy " + name + ": connectionsMax must be within [1, "
                    + CONNECTIONS_MAX + "], got " + connectionsMax);
        }
        Objects.requireNonNull(upstream, "upstream");
        if (name.isBlank()) {
            throw new IllegalArgumentException("a proxy needs a name, got '" + name + "'");
        }
        if (upstream.isUnresolved()) {
            throw new IllegalArgumentException("proxy " + name + ": upstream " + upstream + " is unresolved");
        }
        ServerSocket server = new ServerSocket();
        try {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), 0), BACKLOG);
        } catch (IOException e) {
            server.close();
            throw e;
        }
        TcpProxy proxy = new TcpProxy(name, upstream, connectionsMax, server);
        proxy.threads.start("accept", proxy::acceptLoop);
        return proxy;
    }

    public String name() {
        return name;
    }

    public InetSocketAddress upstream() {
        return upstream;
    }

    /** The port the proxy listens on, on 127.0.0.1. */
    public int port() {
        return server.getLocalPort();
    }

    /** {@code "127.0.0.1:port"}, for a connection string. */
    public String address() {
        return "127.0.0.1:" + port();
    }

    /** The start of every one of the proxy's thread names. */
    public String threadNamePrefix() {
        return threads.prefix();
    }

    /** Resets every open connection (RST on both sides) and refuses new ones until the cut is cleared. */
    public void cut() {
        toxics.change(Toxics.Settings::withCut);
        resetAll();
    }

    /** Resets every open connection once (RST on both sides); new connections work as before. */
    public void resetAll() {
        List<ProxyConnection> open;
        synchronized (connections) {
            open = new ArrayList<>(connections);
        }
        open.forEach(ProxyConnection::reset);
    }

    /** Stops every byte in both directions, on open and new connections, until the blackhole is cleared. */
    public void blackhole() {
        toxics.change(Toxics.Settings::withBlackhole);
    }

    /** Delays every chunk forwarded, in each direction, by {@code perChunk}. */
    public void latency(Duration perChunk) {
        latency(perChunk, Duration.ZERO);
    }

    /**
     * Delays every chunk forwarded, in each direction, by {@code perChunk} plus a uniformly random
     * part of {@code jitter}: never less than {@code perChunk} (unlike Toxiproxy's ±jitter), so a test
     * may assert {@code perChunk} as a lower bound whatever the jitter.
     */
    public void latency(Duration perChunk, Duration jitter) {
        long latencyNanos = checkedLatency("latency", perChunk);
        long jitterNanos = checkedLatency("jitter", jitter);
        toxics.change(t -> t.withLatency(latencyNanos, jitterNanos));
    }

    /** Limits each direction of each connection to {@code bytesPerSecond}. */
    public void throttle(long bytesPerSecond) {
        checkThrottle(bytesPerSecond);
        toxics.change(t -> t.withThrottle(bytesPerSecond));
    }

    /** Clears one toxic, leaving the others. */
    public void clear(Toxic toxic) {
        Objects.requireNonNull(toxic, "toxic");
        toxics.change(t -> t.without(toxic));
    }

    /** Clears every toxic. */
    public void restore() {
        toxics.change(t -> Toxics.Settings.NONE);
    }

    /** The toxics in force now. */
    public Set<Toxic> toxics() {
        return toxics.current().active();
    }

    /** Every connection the proxy accepted, including those it closed at once ({@link #connectionsRefused()}). */
    public long connectionsAccepted() {
        return counters.accepted.sum();
    }

    /** Connections closed as soon as they were accepted: during a cut, beyond the limit, or while closing. */
    public long connectionsRefused() {
        return counters.refused.sum();
    }

    /** Connections reset because the upstream could not be reached. */
    public long upstreamConnectFailures() {
        return counters.upstreamConnectFailures.sum();
    }

    /** Connections open now. */
    public int connectionsOpen() {
        synchronized (connections) {
            return connections.size();
        }
    }

    /** Bytes written to the upstream, over all connections. */
    public long bytesToUpstream() {
        return counters.bytesToUpstream.sum();
    }

    /** Bytes written back to clients, over all connections. */
    public long bytesToClient() {
        return counters.bytesToClient.sum();
    }

    /**
     * Stops listening, resets every connection and waits up to {@link #CLOSE_WAIT} (scaled) for every
     * thread of the proxy to end. Idempotent.
     *
     * @throws IllegalStateException if some thread did not end in time, naming it
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            server.close();
        } catch (IOException e) {
            // Not listening any more is all that was wanted.
        }
        // admit() reads closed under the lock resetAll() takes, so no connection is admitted after this sweep.
        resetAll();
        Duration wait = TestTimeouts.scaled(CLOSE_WAIT);
        List<String> left;
        try {
            left = threads.shutDown(wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(this + ": interrupted while waiting for its threads to end", e);
        }
        if (!left.isEmpty()) {
            throw new IllegalStateException(this + ": threads still running " + wait + " after close: " + left);
        }
    }

    private void acceptLoop() {
        while (!closed.get()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (closed.get()) {
                    return;
                }
                if (!backOffAfterAcceptError()) {
                    return;
                }
                continue;
            }
            counters.accepted.increment();
            admit(client);
        }
    }

    private void admit(Socket client) {
        ProxyConnection connection;
        synchronized (connections) {
            if (closed.get() || toxics.current().cut() || connections.size() >= connectionsMax) {
                counters.refused.increment();
                ProxyConnection.closeQuietly(client, true);
                return;
            }
            connection = new ProxyConnection(nextConnectionId++, client, upstream, toxics, threads, counters,
                    this::forget);
            connections.add(connection);
        }
        connection.start();
    }

    private void forget(ProxyConnection connection) {
        synchronized (connections) {
            connections.remove(connection);
        }
    }

    /** Accept failing while open is a resource limit (file descriptors): retrying at once would spin. */
    private static boolean backOffAfterAcceptError() {
        try {
            TimeUnit.MILLISECONDS.sleep(ACCEPT_ERROR_BACKOFF_MILLIS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** {@code d} in nanoseconds, once checked to be a latency (or jitter) the proxy accepts. */
    static long checkedLatency(String what, Duration d) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.compareTo(LATENCY_MAX) > 0) {
            throw new IllegalArgumentException(what + " must be within [0, " + LATENCY_MAX + "], got " + d);
        }
        return d.toNanos();
    }

    static void checkThrottle(long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("throttle needs bytesPerSecond > 0, got " + bytesPerSecond
                    + " (use blackhole() to stop traffic)");
        }
    }

    @Override
    public String toString() {
        return "TcpProxy[" + name + " " + address() + " -> " + upstream + ", toxics=" + toxics()
                + ", open=" + connectionsOpen() + ", accepted=" + connectionsAccepted()
                + ", refused=" + connectionsRefused() + ", upstreamConnectFailures=" + upstreamConnectFailures()
                + ", bytesToUpstream=" + bytesToUpstream() + ", bytesToClient=" + bytesToClient()
                + ", liveThreads=" + threads.liveCount() + (closed.get() ? ", closed" : "") + "]";
    }
}
