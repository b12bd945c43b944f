package io.lastunit.router.route;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.shard.v1.ReserveBatchRequest;
import io.lastunit.api.shard.v1.ReserveBatchResponse;
import io.lastunit.api.shard.v1.ReserveResult;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.testkit.TestTimeouts;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ReserveBatcher} against a scripted shard over real gRPC on a socket (127.0.0.1): the
 * batches it forms, that each Reserve gets its own slot's answer with the shard's status and
 * details, and its bounds. The scripted shard answers RESERVED with the key as the hold id, or
 * the failure a key names; a gate can hold its first ReserveBatch call so that the test knows
 * what waits in the router meanwhile (with one call in flight at most, that is the next batch).
 */
class ReserveBatcherIT {
    /** How long the test waits for an answer or a latch: 30 s, scaled for slow machines. */
    static final long WAIT_MS = TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis();

    final List<List<String>> batches = Collections.synchronizedList(new ArrayList<>());
    final List<String> unary = Collections.synchronizedList(new ArrayList<>());
    final Map<String, Failure> failures = new java.util.concurrent.ConcurrentHashMap<>();
    final CountDownLatch firstCallArrived = new CountDownLatch(1);
    final CountDownLatch releaseFirstCall = new CountDownLatch(1);
    volatile boolean holdFirstCall;
    volatile Status failWholeCall;
    Server server;
    ManagedChannel channel;
    ReserveBatcher batcher;

    final class ScriptedShard extends ShardServiceGrpc.ShardServiceImplBase {
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public void reserveBatch(ReserveBatchRequest request, StreamObserver<ReserveBatchResponse> out) {
            batches.add(request.getRequestsList().stream().map(ReserveRequest::getIdempotencyKey).toList());
            if (calls.incrementAndGet() == 1 && holdFirstCall) {
                firstCallArrived.countDown();
                try {
                    releaseFirstCall.await(WAIT_MS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (failWholeCall != null) {
                out.onError(failWholeCall.asRuntimeException());
                return;
            }
            ReserveBatchResponse.Builder b = ReserveBatchResponse.newBuilder();
            for (ReserveRequest r : request.getRequestsList()) {
                Failure f = failures.get(r.getIdempotencyKey());
                b.addResults(f == null ? ReserveResult.newBuilder().setResponse(reserved(r))
                        : ReserveResult.newBuilder().setError(StatusProto.fromThrowable(GrpcErrors.toStatus(f))));
            }
            out.onNext(b.build());
            out.onCompleted();
        }
    }

    final class UnaryShard extends InventoryServiceGrpc.InventoryServiceImplBase {
        @Override
        public void reserve(ReserveRequest r, StreamObserver<ReserveResponse> out) {
            unary.add(r.getIdempotencyKey());
            out.onNext(reserved(r));
            out.onCompleted();
        }
    }

    static ReserveResponse reserved(ReserveRequest r) {
        return ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED)
                .setHold(Hold.newBuilder().setHoldId("hold-" + r.getIdempotencyKey()).setQuantity(r.getQuantity()))
                .build();
    }

    /** A shard serving ReserveBatch (when {@code batch}) and the unary Reserve, and a channel to it. */
    void start(boolean batch, ReserveBatcher b) throws Exception {
        NettyServerBuilder sb = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new UnaryShard());
        if (batch) {
            sb.addService(new ScriptedShard());
        }
        server = sb.build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
        batcher = b;
    }

    @AfterEach
    void stop() throws Exception {
        releaseFirstCall.countDown();
        if (batcher != null) {
            batcher.close();
        }
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static ReserveRequest request(String key) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId("sku-1").setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("b-" + key).setRegion("local").build();
    }

    ListenableFuture<ReserveResponse> send(String key) {
        return batcher.reserve(channel, request(key), Deadline.after(WAIT_MS, TimeUnit.MILLISECONDS));
    }

    static ReserveResponse get(ListenableFuture<ReserveResponse> f) throws Exception {
        return f.get(WAIT_MS, TimeUnit.MILLISECONDS);
    }

    static StatusRuntimeException failure(ListenableFuture<ReserveResponse> f) throws Exception {
        try {
            f.get(WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(StatusRuntimeException.class);
            return (StatusRuntimeException) e.getCause();
        }
        throw new AssertionError("expected a failure, got an answer");
    }

    /** Sends "first", and returns once the shard holds it (the batcher's one call in flight). */
    ListenableFuture<ReserveResponse> holdFirst() throws Exception {
        holdFirstCall = true;
        ListenableFuture<ReserveResponse> first = send("first");
        assertThat(firstCallArrived.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
        return first;
    }

    @Test
    void reservesThatArriveWhileACallIsInFlightGoOutTogetherEachWithItsOwnAnswer() throws Exception {
        start(true, new ReserveBatcher(64, 1_000, 1));
        ListenableFuture<ReserveResponse> first = holdFirst();
        List<ListenableFuture<ReserveResponse>> waiting = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            waiting.add(send("k" + i));
        }
        releaseFirstCall.countDown();

        assertThat(get(first).getHold().getHoldId()).isEqualTo("hold-first");
        for (int i = 0; i < 10; i++) {
            ReserveResponse r = get(waiting.get(i));
            assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(r.getHold().getHoldId()).isEqualTo("hold-k" + i);
        }
        assertThat(batches).containsExactly(List.of("first"),
                List.of("k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"));
        assertThat(batcher.stats()).containsExactly(2, 11);
    }

    @Test
    void belowHoldAbove_aReserveGoesOutAtOnce_evenWithEveryCallInFlight() throws Exception {
        start(true, new ReserveBatcher(64, 1_000, 1, 2));
        ListenableFuture<ReserveResponse> first = holdFirst();

        // The one call allowed is in flight, but with one Reserve, fewer than 2: k0 does not wait for its answer.
        assertThat(get(send("k0")).getHold().getHoldId()).isEqualTo("hold-k0");
        assertThat(first.isDone()).isFalse();
        releaseFirstCall.countDown();

        assertThat(get(first).getHold().getHoldId()).isEqualTo("hold-first");
        assertThat(batches).containsExactly(List.of("first"), List.of("k0"));
    }

    @Test
    void noCallCarriesMoreThanBatchMaxReserves() throws Exception {
        start(true, new ReserveBatcher(4, 1_000, 1));
        ListenableFuture<ReserveResponse> first = holdFirst();
        List<ListenableFuture<ReserveResponse>> waiting = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            waiting.add(send("k" + i));
        }
        releaseFirstCall.countDown();
        get(first);
        for (var f : waiting) {
            get(f);
        }
        assertThat(batches).containsExactly(List.of("first"), List.of("k0", "k1", "k2", "k3"),
                List.of("k4", "k5", "k6", "k7"), List.of("k8", "k9"));
    }

    @Test
    void aFailedEntryFailsOnlyItsOwnReserveWithTheShardsStatusAndDetails() throws Exception {
        start(true, new ReserveBatcher(64, 1_000, 1));
        failures.put("busy", Failure.retryable(Reason.QUEUE_FULL, "lane queue is full", Duration.ofMillis(200)));
        failures.put("moved", Failure.of(Reason.MOVED, "shard test does not own acme/sku-1",
                Map.of("epoch", "7", "owner", "other")));
        ListenableFuture<ReserveResponse> first = holdFirst();
        ListenableFuture<ReserveResponse> ok = send("ok");
        ListenableFuture<ReserveResponse> busy = send("busy");
        ListenableFuture<ReserveResponse> moved = send("moved");
        releaseFirstCall.countDown();
        get(first);

        assertThat(get(ok).getHold().getHoldId()).isEqualTo("hold-ok");
        assertThat(batches.get(1)).containsExactly("ok", "busy", "moved");
        StatusRuntimeException b = failure(busy);
        assertThat(b.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(b.getStatus().getDescription()).isEqualTo("lane queue is full");
        assertThat(GrpcErrors.errorInfo(b).orElseThrow().getReason()).isEqualTo(Reason.QUEUE_FULL.name());
        assertThat(GrpcErrors.retryAfterMs(b)).isEqualTo(200);
        StatusRuntimeException m = failure(moved);
        assertThat(m.getStatus().getCode()).isEqualTo(Status.Code.ABORTED);
        assertThat(GrpcErrors.errorInfo(m).orElseThrow().getMetadataMap())
                .containsEntry("epoch", "7").containsEntry("owner", "other");
    }

    @Test
    void aCallThatFailsAsAWholeFailsEachOfItsReserves() throws Exception {
        start(true, new ReserveBatcher(64, 1_000, 1));
        failWholeCall = Status.UNAVAILABLE.withDescription("shard is restarting");
        ListenableFuture<ReserveResponse> first = holdFirst();
        ListenableFuture<ReserveResponse> a = send("a");
        ListenableFuture<ReserveResponse> b = send("b");
        releaseFirstCall.countDown();
        for (var f : List.of(first, a, b)) {
            StatusRuntimeException e = failure(f);
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(e.getStatus().getDescription()).isEqualTo("shard is restarting");
        }
    }

    @Test
    void aShardWithoutReserveBatchGetsUnaryReserves() throws Exception {
        start(false, new ReserveBatcher(64, 1_000, 4));
        for (int i = 0; i < 5; i++) {
            assertThat(get(send("u" + i)).getHold().getHoldId()).isEqualTo("hold-u" + i);
        }
        assertThat(unary).containsExactly("u0", "u1", "u2", "u3", "u4");
        // Only the first try was a ReserveBatch (answered UNIMPLEMENTED); it counts as one call.
        assertThat(batcher.stats()[0]).isEqualTo(1);
    }

    @Test
    void batchMaxOneSendsEveryReserveAsItsOwnCall() throws Exception {
        start(true, new ReserveBatcher(1, 1_000, 4));
        for (int i = 0; i < 5; i++) {
            assertThat(get(send("u" + i)).getHold().getHoldId()).isEqualTo("hold-u" + i);
        }
        assertThat(unary).containsExactly("u0", "u1", "u2", "u3", "u4");
        assertThat(batches).isEmpty();
    }

    @Test
    void pastQueueMaxWaitingReservesTheNextIsRefusedAtOnceAndTheOthersStillGo() throws Exception {
        start(true, new ReserveBatcher(64, 2, 1));
        ListenableFuture<ReserveResponse> first = holdFirst(); // sent: no longer waiting
        ListenableFuture<ReserveResponse> a = send("a");
        ListenableFuture<ReserveResponse> b = send("b");
        ListenableFuture<ReserveResponse> c = send("c");

        assertThat(c.isDone()).isTrue();
        StatusRuntimeException full = failure(c);
        assertThat(full.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(GrpcErrors.errorInfo(full).orElseThrow().getReason()).isEqualTo(Reason.QUEUE_FULL.name());
        assertThat(GrpcErrors.retryAfterMs(full)).isEqualTo(ReserveBatcher.RETRY_AFTER.toMillis());

        releaseFirstCall.countDown();
        get(first);
        get(a);
        get(b);
        assertThat(batches).containsExactly(List.of("first"), List.of("a", "b"));
        // The queue has room again.
        assertThat(get(send("d")).getHold().getHoldId()).isEqualTo("hold-d");
    }

    @Test
    void aReserveWhoseDeadlinePassedWhileWaitingFailsAndIsNotSent() throws Exception {
        start(true, new ReserveBatcher(64, 1_000, 1));
        ListenableFuture<ReserveResponse> first = holdFirst();
        Deadline soon = Deadline.after(100, TimeUnit.MILLISECONDS);
        ListenableFuture<ReserveResponse> late = batcher.reserve(channel, request("late"), soon);
        ListenableFuture<ReserveResponse> fine = send("fine");
        while (!soon.isExpired()) {
            Thread.sleep(10);
        }
        releaseFirstCall.countDown();
        get(first);
        assertThat(failure(late).getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(get(fine).getHold().getHoldId()).isEqualTo("hold-fine");
        assertThat(batches).containsExactly(List.of("first"), List.of("fine"));
    }

    @Test
    void closingFailsWhatWaitsAndRefusesWhatComesAfter() throws Exception {
        start(true, new ReserveBatcher(64, 1_000, 1));
        holdFirst();
        ListenableFuture<ReserveResponse> waiting = send("waiting");
        batcher.close();
        assertThat(failure(waiting).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        StatusRuntimeException after = failure(send("after"));
        assertThat(after.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(GrpcErrors.errorInfo(after).orElseThrow().getReason()).isEqualTo(Reason.SHUTTING_DOWN.name());
        assertThat(batches).containsExactly(List.of("first"));
    }
    @Test
    void underConcurrentCallersEveryReserveIsSentExactlyOnceAndAnswered() throws Exception {
        start(true, new ReserveBatcher(8, 100_000, 2));
        int threads = 8;
        int perThread = 1_000;
        List<ListenableFuture<ReserveResponse>> all = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    all.add(send("t" + id + "-" + i));
                }
            });
            th.start();
            callers.add(th);
        }
        go.countDown();
        for (Thread th : callers) {
            th.join();
        }
        for (var f : all) {
            assertThat(get(f).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        }
        List<String> sent = batches.stream().flatMap(List::stream).toList();
        assertThat(sent).hasSize(threads * perThread).doesNotHaveDuplicates();
        assertThat(batches).allSatisfy(b -> assertThat(b).hasSizeBetween(1, 8));
        assertThat(batcher.stats()).containsExactly(batches.size(), threads * perThread);
    }
    @Test
    void aCallerWhoseContextEndsDoesNotCancelTheBatchItSent() throws Exception {
        start(true, new ReserveBatcher(64, 1_000, 1));
        holdFirstCall = true;
        // As a router server call's context is cancelled once it is answered, while the batch it
        // happened to send still carries other callers' Reserves.
        Context.CancellableContext caller = Context.current().withCancellation();
        ListenableFuture<ReserveResponse> first = caller.call(() -> send("first"));
        assertThat(firstCallArrived.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
        ListenableFuture<ReserveResponse> other = caller.call(() -> send("other"));
        caller.cancel(null);
        releaseFirstCall.countDown();
        assertThat(get(first).getHold().getHoldId()).isEqualTo("hold-first");
        assertThat(get(other).getHold().getHoldId()).isEqualTo("hold-other");
    }
}
