package io.lastunit.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ClientLoopTest {

    /** A reply on a channel built on the loop is read, and its callback run, by the loop's own thread, not gRPC's shared ones. */
    @Test
    void aChannelOnTheLoopIsServedByItsOwnThread_andCloseStopsIt() throws Exception {
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(new HealthStatusManager().getHealthService()).build().start();
        ClientLoop loop = new ClientLoop();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext()
                .directExecutor().eventLoopGroup(loop.group).channelType(ClientLoop.channelType()).build();
        try {
            CompletableFuture<String> thread = new CompletableFuture<>();
            var reply = HealthGrpc.newFutureStub(channel).check(HealthCheckRequest.getDefaultInstance());
            reply.addListener(() -> thread.complete(Thread.currentThread().getName()), MoreExecutors.directExecutor());
            assertThat(reply.get(10, TimeUnit.SECONDS).getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
            assertThat(thread.get(10, TimeUnit.SECONDS)).startsWith("flash-sale-client");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            loop.close();
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertThat(loop.group.isTerminated()).isTrue();
    }
}
