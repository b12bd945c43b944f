package io.lastunit.testkit.faults;

import io.lastunit.testkit.TestTimeouts;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The upstream of the proxy tests: writes back every byte it reads, on 127.0.0.1, a thread per
 * connection; at end of stream it half-closes its side too. Counts the connections it has open so a
 * test can see a cut reach the server side.
 */
final class EchoServer implements AutoCloseable {
    private final ServerSocket server;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();

    private EchoServer(ServerSocket server) {
        this.server = server;
        start("echo-accept", this::acceptLoop);
    }

    static EchoServer start() throws IOException {
        return new EchoServer(new ServerSocket(0, 50, InetAddress.getByAddress(new byte[] {127, 0, 0, 1})));
    }

    InetSocketAddress address() {
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    int connectionsOpen() {
        return open.size();
    }

    private void start(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                open.add(socket);
                start("echo-" + socket.getPort(), () -> echo(socket));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void echo(Socket socket) {
        try (socket) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] buffer = new byte[8192];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
            socket.shutdownOutput();
        } catch (IOException e) {
            // Reset by the proxy: that is what the cut tests make happen.
        } finally {
            open.remove(socket);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : open) {
            socket.close();
        }
        try {
            for (Thread thread : threads) {
                thread.join(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
