package io.lastunit.testkit.faults;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One client connection accepted by a {@link TcpProxy} and its connection to the upstream, with a
 * thread per direction: the "up" thread connects to the upstream (once no blackhole stands in the
 * way), starts the "down" thread, then pumps client → upstream; "down" pumps upstream → client.
 *
 * <p>Owns both sockets and its two threads. Thread-safe: {@link #reset()} may come from the test
 * thread (a cut), the accept loop or either pump, and only the first close counts. A direction that
 * reaches end of stream half-closes the other side, so a client's shutdownOutput travels through;
 * the connection closes once both directions have ended.
 *
 * <p>Hazard: the upstream sees a connection only after the client's; a client refused by the
 * upstream (it is down) is reset, as if the proxy itself had refused it.
 */
final class ProxyConnection {
    /** How long connecting to the upstream may take before the client is reset. */
    static final int UPSTREAM_CONNECT_TIMEOUT_MILLIS = 5_000;

    private final long id;
    private final Socket client;
    private final Socket upstream = new Socket();
    private final InetSocketAddress upstreamAddress;
    private final Toxics toxics;
    private final ProxyThreads threads;
    private final ProxyCounters counters;
    private final Consumer<ProxyConnection> onClosed;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger openDirections = new AtomicInteger(2);
    private final List<Thread> pumps = new CopyOnWriteArrayList<>();

    ProxyConnection(long id, Socket client, InetSocketAddress upstreamAddress, Toxics toxics, ProxyThreads threads,
            ProxyCounters counters, Consumer<ProxyConnection> onClosed) {
        this.id = id;
        this.client = client;
        this.upstreamAddress = upstreamAddress;
        this.toxics = toxics;
        this.threads = threads;
        this.counters = counters;
        this.onClosed = onClosed;
    }

    void start() {
        if (threads.start("c" + id + "-up", this::runUp) == null) {
            reset();
        }
    }

    /** Closes both sides at once with a reset (RST), interrupting the pumps' sleeps and waits. */
    void reset() {
        close(true);
    }

    private void runUp() {
        if (!enter()) {
            return;
        }
        try {
            toxics.awaitFlowing();
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
            upstream.connect(upstreamAddress, UPSTREAM_CONNECT_TIMEOUT_MILLIS);
            if (threads.start("c" + id + "-down", this::runDown) == null) {
                reset();
                return;
            }
            new Pump(this, client.getInputStream(), upstream.getOutputStream(), toxics, counters.bytesToUpstream)
                    .run(() -> endOfStream(upstream));
        } catch (IOException e) {
            if (!closed.get()) {
                counters.upstreamConnectFailures.increment();
            }
            reset();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reset();
        }
    }

    private void runDown() {
        if (!enter()) {
            return;
        }
        try {
            new Pump(this, upstream.getInputStream(), client.getOutputStream(), toxics, counters.bytesToClient)
                    .run(() -> endOfStream(client));
        } catch (IOException e) {
            reset();
        }
    }

    /**
     * Registers the calling pump thread so a close interrupts it; false if the connection is already
     * closed (checked after registering, so a close either sees the thread or the thread sees the close).
     */
    private boolean enter() {
        pumps.add(Thread.currentThread());
        return !closed.get();
    }

    private void endOfStream(Socket target) {
        try {
            target.shutdownOutput();
        } catch (IOException e) {
            reset();
            return;
        }
        if (openDirections.decrementAndGet() == 0) {
            close(false);
        }
    }

    private void close(boolean withReset) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closeQuietly(client, withReset);
        closeQuietly(upstream, withReset);
        for (Thread pump : pumps) {
            if (pump != Thread.currentThread()) {
                pump.interrupt();
            }
        }
        onClosed.accept(this);
    }

    /** Closes {@code socket}; with {@code withReset} as an RST (linger 0) rather than an orderly FIN. */
    static void closeQuietly(Socket socket, boolean withReset) {
        try {
            if (withReset && !socket.isClosed()) {
                socket.setSoLinger(true, 0);
            }
        } catch (IOException e) {
            // The socket is already unusable; closing it below is all that is left to do.
        }
        try {
            socket.close();
        } catch (IOException e) {
            // Nothing more can be done about a socket that fails to close.
        }
    }

    @Override
    public String toString() {
        return "connection " + id + " (" + client.getRemoteSocketAddress() + " -> " + upstreamAddress + ")";
    }
}
