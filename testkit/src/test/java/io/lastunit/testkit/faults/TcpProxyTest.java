package io.lastunit.testkit.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.lastunit.testkit.TestTimeouts;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TcpProxyTest {
    static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(10));

    /**
     * How long a read waits to show that nothing arrives. Not scaled: a slow host only makes
     * "nothing arrived" more likely, never less, so this bound cannot make the test flaky.
     */
    static final int NOTHING_ARRIVES_MILLIS = 300;

    final List<Socket> clients = new ArrayList<>();
    EchoServer echo;
    TcpProxy proxy;

    @BeforeEach
    void start() throws IOException {
        echo = EchoServer.start();
        proxy = TcpProxy.start("echo", echo.address());
    }

    @AfterEach
    void stop() throws Exception {
        for (Socket client : clients) {
            client.close();
        }
        proxy.close();
        echo.close();
    }

    @Test
    void start_listensOnLoopback_onAFreePort() {
        assertThat(proxy.port()).isPositive();
        assertThat(proxy.address()).isEqualTo("127.0.0.1:" + proxy.port());
        assertThat(proxy.toxics()).isEmpty();
    }

    @Test
    void bytes_passThroughBothWays_andAreCounted() throws IOException {
        Socket client = connect();

        assertThat(roundTrip(client, "hello")).isEqualTo("hello");
        assertThat(roundTrip(client, "again")).isEqualTo("again");

        eventually().until(() -> proxy.bytesToUpstream() == 10 && proxy.bytesToClient() == 10);
        assertThat(proxy.connectionsAccepted()).isEqualTo(1);
        assertThat(proxy.connectionsOpen()).isEqualTo(1);
    }

    @Test
    void clientEndOfStream_travelsToTheUpstream_andItsEndOfStreamComesBack() throws IOException {
        Socket client = connect();
        client.getOutputStream().write("bye".getBytes(StandardCharsets.UTF_8));
        client.shutdownOutput();

        assertThat(new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("bye");
        eventually().until(() -> proxy.connectionsOpen() == 0);
    }

    @Test
    void cut_closesOpenConnections_andRefusesNewOnes_untilRestored() throws IOException {
        Socket open = connect();
        assertThat(roundTrip(open, "before")).isEqualTo("before");

        proxy.cut();

        assertEnded(open);
        eventually().until(() -> echo.connectionsOpen() == 0);
        assertRefused(proxy);
        assertThat(proxy.toxics()).containsExactly(Toxic.CUT);
        eventually().until(() -> proxy.connectionsRefused() == 1);

        proxy.restore();

        assertThat(roundTrip(connect(), "after")).isEqualTo("after");
    }

    @Test
    void resetAll_closesOpenConnectionsOnce_andNewOnesWork() throws IOException {
        Socket first = connect();
        Socket second = connect();
        assertThat(roundTrip(first, "a")).isEqualTo("a");
        assertThat(roundTrip(second, "b")).isEqualTo("b");

        proxy.resetAll();

        assertEnded(first);
        assertEnded(second);
        assertThat(roundTrip(connect(), "c")).isEqualTo("c");
        assertThat(proxy.toxics()).isEmpty();
    }

    @Test
    void blackhole_stallsBytesOnOpenAndNewConnections_andTheyArriveAfterRestore() throws IOException {
        Socket open = connect();
        assertThat(roundTrip(open, "before")).isEqualTo("before");

        proxy.blackhole();
        write(open, "stalled");
        Socket during = connect();
        write(during, "new");

        assertNothingArrives(open);
        assertNothingArrives(during);
        assertThat(echo.connectionsOpen()).as("a blackholed connection does not reach the upstream").isEqualTo(1);

        proxy.restore();

        assertThat(read(open, "stalled".length())).isEqualTo("stalled");
        assertThat(read(during, "new".length())).isEqualTo("new");
        assertThat(roundTrip(connect(), "after")).isEqualTo("after");
    }

    @Test
    void latency_delaysEachDirection_byAtLeastTheLatency() throws IOException {
        Socket client = connect();
        assertThat(roundTrip(client, "warm")).isEqualTo("warm");
        Duration latency = Duration.ofMillis(150);

        proxy.latency(latency, Duration.ofMillis(20));
        long start = System.nanoTime();
        String echoed = roundTrip(client, "ping");
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(echoed).isEqualTo("ping");
        assertThat(elapsed).as("one chunk each way, each delayed").isGreaterThanOrEqualTo(latency.multipliedBy(2));
        assertThat(proxy.toxics()).containsExactly(Toxic.LATENCY);
    }

    @Test
    void throttle_pacesEachDirection_toTheRate() throws IOException {
        Socket client = connect();
        long bytesPerSecond = 10_000;
        int bytes = 5_000;
        proxy.throttle(bytesPerSecond);

        byte[] sent = new byte[bytes];
        Arrays.fill(sent, (byte) 'x');
        long start = System.nanoTime();
        client.getOutputStream().write(sent);
        byte[] received = client.getInputStream().readNBytes(bytes);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(received).isEqualTo(sent);
        Duration atLeast = Duration.ofNanos(bytes * 1_000_000_000L / bytesPerSecond);
        assertThat(elapsed).isGreaterThanOrEqualTo(atLeast.multipliedBy(9).dividedBy(10));
    }

    @Test
    void clear_removesOneToxic_andLeavesTheOthers() {
        proxy.latency(Duration.ofMillis(5));
        proxy.throttle(1_000);
        proxy.blackhole();

        proxy.clear(Toxic.BLACKHOLE);

        assertThat(proxy.toxics()).containsExactlyInAnyOrder(Toxic.LATENCY, Toxic.THROTTLE);
        proxy.restore();
        assertThat(proxy.toxics()).isEmpty();
    }

    @Test
    void toxics_refuseValuesOutOfBounds() {
        assertThatThrownBy(() -> proxy.latency(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("latency");
        assertThatThrownBy(() -> proxy.latency(TcpProxy.LATENCY_MAX.plusMillis(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> proxy.latency(Duration.ZERO, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("jitter");
        assertThatThrownBy(() -> proxy.throttle(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bytesPerSecond");
        assertThat(proxy.toxics()).isEmpty();
    }

    @Test
    void connectionsBeyondTheLimit_areClosedAtOnce() throws IOException {
        try (TcpProxy one = TcpProxy.start("one", echo.address(), 1)) {
            Socket first = connect(one);
            assertThat(roundTrip(first, "1")).isEqualTo("1");

            assertRefused(one);

            first.close();
            eventually().until(() -> one.connectionsOpen() == 0);
            assertThat(roundTrip(connect(one), "3")).isEqualTo("3");
            assertThat(one.connectionsRefused()).isEqualTo(1);
        }
        assertThatThrownBy(() -> TcpProxy.start("none", echo.address(), 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TcpProxy.start("many", echo.address(), TcpProxy.CONNECTIONS_MAX + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void upstreamDown_resetsTheClient_andIsCounted() throws IOException {
        InetSocketAddress nobody;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getByAddress(new byte[] {127, 0, 0, 1}))) {
            nobody = (InetSocketAddress) free.getLocalSocketAddress();
        }
        try (TcpProxy down = TcpProxy.start("down", nobody)) {
            assertRefused(down);
            eventually().until(() -> down.upstreamConnectFailures() == 1);
        }
    }

    @Test
    void close_endsEveryProxyThread_evenWithStalledAndDelayedConnections() throws Exception {
        Socket stalled = connect();
        Socket delayed = connect();
        assertThat(roundTrip(stalled, "s")).isEqualTo("s");
        assertThat(roundTrip(delayed, "d")).isEqualTo("d");
        proxy.latency(Duration.ofSeconds(30));
        write(delayed, "sleeping in the pump");
        proxy.blackhole();
        write(stalled, "waiting in the pump");
        connect();
        assertThat(proxyThreads()).isNotEmpty();

        proxy.close();
        proxy.close();

        eventually().until(() -> proxyThreads().isEmpty());
        assertEnded(stalled);
        assertEnded(delayed);
    }

    private List<String> proxyThreads() {
        Set<Thread> threads = Thread.getAllStackTraces().keySet();
        return threads.stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith(proxy.threadNamePrefix())).toList();
    }

    private Socket connect() throws IOException {
        return connect(proxy);
    }

    private Socket connect(TcpProxy to) throws IOException {
        Socket socket = new Socket();
        clients.add(socket);
        socket.connect(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), to.port()),
                (int) WAIT.toMillis());
        socket.setSoTimeout((int) WAIT.toMillis());
        socket.setTcpNoDelay(true);
        return socket;
    }

    private static String roundTrip(Socket socket, String text) throws IOException {
        write(socket, text);
        return read(socket, text.length());
    }

    private static void write(Socket socket, String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
    }

    /**
     * A new connection to {@code to} is closed at once: the reset may already fail the connect,
     * else a read ends or fails.
     */
    private void assertRefused(TcpProxy to) {
        Socket socket;
        try {
            socket = connect(to);
            write(socket, "refused?");
        } catch (IOException e) {
            assertThat(e).isNotInstanceOf(SocketTimeoutException.class);
            return;
        }
        assertEnded(socket);
    }

    private static String read(Socket socket, int length) throws IOException {
        byte[] bytes = socket.getInputStream().readNBytes(length);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** The proxy closed the socket: a read ends (-1) or fails with a reset, rather than timing out. */
    private static void assertEnded(Socket socket) {
        Throwable thrown = catchThrowable(() -> {
            InputStream in = socket.getInputStream();
            int read;
            do {
                read = in.read();
            } while (read >= 0);
        });
        if (thrown != null) {
            assertThat(thrown).isInstanceOf(IOException.class).isNotInstanceOf(SocketTimeoutException.class);
        }
    }

    private static void assertNothingArrives(Socket socket) throws IOException {
        int timeout = socket.getSoTimeout();
        socket.setSoTimeout(NOTHING_ARRIVES_MILLIS);
        try {
            assertThatThrownBy(() -> socket.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        } finally {
            socket.setSoTimeout(timeout);
        }
    }

    private static ConditionFactory eventually() {
        return await().atMost(WAIT).pollInterval(Duration.ofMillis(10));
    }
}
