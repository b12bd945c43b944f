package io.lastunit.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The open loop sent from the buyers' event loop ({@code SaleDriver.OpenLoopSender}). The
 * server here is a stand-in that answers RESERVED: what is tested is the load generator's
 * sending, not the platform.
 */
class OpenLoopSenderTest {

    /** A server that answers every Reserve RESERVED after {@code delayMs}, counting the calls it holds at once. */
    private static final class Stand extends InventoryServiceGrpc.InventoryServiceImplBase {
        final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        final long delayMs;
        final AtomicInteger open = new AtomicInteger();
        final AtomicInteger openMax = new AtomicInteger();
        final Set<String> keys = ConcurrentHashMap.newKeySet();

        Stand(long delayMs) {
            this.delayMs = delayMs;
        }

        @Override
        public void reserve(ReserveRequest req, StreamObserver<ReserveResponse> out) {
            keys.add(req.getIdempotencyKey());
            openMax.accumulateAndGet(open.incrementAndGet(), Math::max);
            later.schedule(() -> {
                open.decrementAndGet();
                out.onNext(ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED).build());
                out.onCompleted();
            }, delayMs, TimeUnit.MILLISECONDS);
        }
    }

    private static SaleResult sell(Stand stand, int buyers, int concurrency, double rate, Set<String> startedOn)
            throws Exception {
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(stand).build().start();
        ClientLoop loop = new ClientLoop();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext()
                .directExecutor().eventLoopGroup(loop.group).channelType(ClientLoop.channelType()).build();
        Channel recording = ClientInterceptors.intercept(channel, new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> m, CallOptions o, Channel next) {
                startedOn.add(Thread.currentThread().getName());
                return next.newCall(m, o);
            }
        });
        try {
            SaleDriver.Plan plan = new SaleDriver.Plan(List.of(new SaleDriver.Item("t", "i", buyers)), buyers,
                    concurrency, rate, false, List.of("local"), "test");
            return new SaleDriver(recording, plan, new Progress(Progress.Mode.NONE, System.err), loop.group.next())
                    .run();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            loop.close();
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            stand.later.shutdownNow();
        }
    }

    @Test
    @Timeout(60)
    void everyBuyerIsSentFromTheLoopThread_once_andAnswered() throws Exception {
        Stand stand = new Stand(1);
        Set<String> startedOn = ConcurrentHashMap.newKeySet();
        SaleResult r = sell(stand, 2_000, 512, 4_000, startedOn);
        assertThat(r.reserved()).isEqualTo(2_000);
        assertThat(r.errors()).isZero();
        assertThat(r.calls()).isEqualTo(2_000);
        assertThat(stand.keys).hasSize(2_000);
        assertThat(r.all().getTotalCount()).isEqualTo(2_000);
        assertThat(startedOn).isNotEmpty().allMatch(n -> n.startsWith("flash-sale-client"), "the loop's thread");
        // 2,000 buyers at 4,000/s are due over 0.5 s: the sender keeps to their times, not all at once
        assertThat(r.durationSeconds()).isGreaterThanOrEqualTo(0.49);
    }

    /**
     * A full in-flight cap must not block the loop: the replies that free the slots are read by the
     * same thread. A blocking acquire there would never finish (the test's timeout).
     */
    @Test
    @Timeout(60)
    void aFullCapWaitsWithoutBlockingTheLoop_andNeverExceedsIt() throws Exception {
        Stand stand = new Stand(20);
        Set<String> startedOn = ConcurrentHashMap.newKeySet();
        SaleResult r = sell(stand, 100, 2, 100_000, startedOn);
        assertThat(r.reserved()).isEqualTo(100);
        assertThat(r.errors()).isZero();
        assertThat(stand.openMax.get()).isEqualTo(2);
        // due within 1 ms, but 2 at a time for 20 ms each: the latency from the intended times shows the wait
        assertThat(r.all().getMaxValue()).isGreaterThanOrEqualTo(900_000L);
    }
}
