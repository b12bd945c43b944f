package io.lastunit.bench.load;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The load generator's own transport thread: one event loop (epoll where Netty's native transport
 * loads, else NIO), thread {@code flash-sale-client-N}, for its one connection to the router. Closed
 * after the channel on it (register it with the {@code Closer} first).
 */
final class ClientLoop implements AutoCloseable {
    private static final boolean EPOLL = Epoll.isAvailable();

    final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("flash-sale-client", true),
            EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());

    /** The socket channel class that goes with {@link #group}. */
    static Class<? extends SocketChannel> channelType() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    @Override
    public void close() throws InterruptedException {
        group.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }
}
