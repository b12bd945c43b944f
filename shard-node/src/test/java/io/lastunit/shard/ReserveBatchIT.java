package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ReserveBatchRequest;
import io.lastunit.api.shard.v1.ReserveBatchResponse;
import io.lastunit.api.shard.v1.ReserveResult;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShardService.ReserveBatch, the call a router's batcher sends, against a real shard node over
 * real gRPC on real PostgreSQL: every entry is decided as its own Reserve would be and answered
 * in its own slot, a bad entry fails only its slot, and a batch as a whole is bounded.
 */
class ReserveBatchIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static ShardNodeHarness shard;

    @BeforeAll
    static void start() throws Exception {
        shard = new ShardNodeHarness(PG, Map.of()).start();
    }

    @AfterAll
    static void stop() {
        shard.close();
    }

    private static ShardServiceGrpc.ShardServiceBlockingStub api() {
        return ShardServiceGrpc.newBlockingStub(shard.channel())
                .withDeadlineAfter(TestTimeouts.scaled(java.time.Duration.ofSeconds(30)).toMillis(),
                        TimeUnit.MILLISECONDS);
    }

    private static ReserveRequest reserve(String item, String key, int quantity) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId(item).setQuantity(quantity)
                .setIdempotencyKey(key).setBuyerId("buyer-" + key).setRegion("local").build();
    }

    private static ErrorInfo info(com.google.rpc.Status s) throws Exception {
        return GrpcErrors.errorInfo(StatusProto.toStatusRuntimeException(s)).orElseThrow();
    }

    @Test
    void eachEntryIsDecidedAsItsOwnReserveAndAnsweredInItsSlot() throws Exception {
        shard.createItem("acme", "batch-mixed", 3);
        // Settle a key first, so the batch can reuse it with other parameters.
        ReserveBatchResponse first = api().reserveBatch(ReserveBatchRequest.newBuilder()
                .addRequests(reserve("batch-mixed", "k-settled", 1)).build());
        assertThat(first.getResults(0).getResponse().getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        String settledHold = first.getResults(0).getResponse().getHold().getHoldId();

        ReserveBatchResponse r = api().reserveBatch(ReserveBatchRequest.newBuilder()
                .addRequests(reserve("batch-mixed", "k-1", 1))               // 0: wants a unit
                .addRequests(reserve("batch-mixed", "k-settled", 1))         // 1: its earlier hold again
                .addRequests(reserve("batch-mixed", "k-0", 0))               // 2: quantity 0, refused at the edge
                .addRequests(reserve("batch-mixed", "k-settled", 2))         // 3: the key with other parameters
                .addRequests(reserve("batch-mixed", "k-2", 1))               // 4: wants a unit
                .addRequests(reserve("batch-mixed", "k-3", 1))               // 5: wants a unit: one of 0, 4, 5 finds none
                .addRequests(reserve("no-such-item", "k-4", 1))              // 6: unknown item
                .build());

        assertThat(r.getResultsCount()).isEqualTo(7);
        List<ReserveResult> res = r.getResultsList();
        assertThat(res.get(1).getResponse().getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(res.get(1).getResponse().getHold().getHoldId()).isEqualTo(settledHold);
        assertThat(res.get(2).hasError()).isTrue();
        assertThat(res.get(2).getError().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(info(res.get(2).getError()).getReason()).isEqualTo(Reason.INVALID_FIELD.name());
        assertThat(res.get(2).getError().getDetailsList()).anyMatch(d -> d.is(BadRequest.class));
        assertThat(res.get(3).getError().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS.value());
        assertThat(info(res.get(3).getError()).getReason()).isEqualTo(Reason.IDEMPOTENCY_KEY_REUSED.name());
        // Entries 0, 4 and 5 race for the two units left (their buckets' lanes run in parallel):
        // exactly two get one.
        List<ReserveOutcome> racing = List.of(res.get(0).getResponse().getOutcome(),
                res.get(4).getResponse().getOutcome(), res.get(5).getResponse().getOutcome());
        assertThat(racing).containsExactlyInAnyOrder(ReserveOutcome.RESERVED, ReserveOutcome.RESERVED,
                ReserveOutcome.SOLD_OUT);
        assertThat(res.get(6).getError().getCode()).isEqualTo(Status.Code.NOT_FOUND.value());
        assertThat(info(res.get(6).getError()).getReason()).isEqualTo(Reason.ITEM_NOT_FOUND.name());

        var stock = shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme")
                .setItemId("batch-mixed").setRegion("local").build()).getStock();
        assertThat(stock.getAvailable()).isZero();
        assertThat(stock.getHeld()).isEqualTo(3);
        InvariantReport inv = shard.checkInvariants();
        assertThat(inv.getDriftsList()).isEmpty();
        assertThat(inv.getOk()).isTrue();
    }

    @Test
    void theSameKeyTwiceInOneBatchTakesOneUnitAndBothGetItsHold() {
        shard.createItem("acme", "batch-twice", 5);
        ReserveBatchResponse r = api().reserveBatch(ReserveBatchRequest.newBuilder()
                .addRequests(reserve("batch-twice", "dup", 1))
                .addRequests(reserve("batch-twice", "dup", 1))
                .build());
        assertThat(r.getResults(0).getResponse().getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(r.getResults(1).getResponse().getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(r.getResults(1).getResponse().getHold().getHoldId())
                .isEqualTo(r.getResults(0).getResponse().getHold().getHoldId());
        var stock = shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme")
                .setItemId("batch-twice").setRegion("local").build()).getStock();
        assertThat(stock.getHeld()).isEqualTo(1);
        assertThat(stock.getAvailable()).isEqualTo(4);
    }

    @Test
    void manyBatchesAtOnceSellExactlyTheStock() throws Exception {
        shard.createItem("acme", "batch-race", 100);
        int batches = 40;
        int perBatch = 50; // 2,000 buyers for 100 units
        List<com.google.common.util.concurrent.ListenableFuture<ReserveBatchResponse>> calls = new ArrayList<>();
        ShardServiceGrpc.ShardServiceFutureStub async = ShardServiceGrpc.newFutureStub(shard.channel());
        for (int b = 0; b < batches; b++) {
            ReserveBatchRequest.Builder req = ReserveBatchRequest.newBuilder();
            for (int i = 0; i < perBatch; i++) {
                req.addRequests(reserve("batch-race", "race-" + b + "-" + i, 1));
            }
            calls.add(async.withDeadlineAfter(TestTimeouts.scaled(java.time.Duration.ofSeconds(60)).toMillis(),
                    TimeUnit.MILLISECONDS).reserveBatch(req.build()));
        }
        int reserved = 0;
        int soldOut = 0;
        int other = 0;
        Set<String> holds = new HashSet<>();
        for (var call : calls) {
            for (ReserveResult result : call.get(TestTimeouts.scaled(java.time.Duration.ofSeconds(60)).toMillis(),
                    TimeUnit.MILLISECONDS).getResultsList()) {
                if (result.hasResponse() && result.getResponse().getOutcome() == ReserveOutcome.RESERVED) {
                    reserved++;
                    holds.add(result.getResponse().getHold().getHoldId());
                } else if (result.hasResponse() && result.getResponse().getOutcome() == ReserveOutcome.SOLD_OUT) {
                    soldOut++;
                } else {
                    other++;
                }
            }
        }
        assertThat(other).isZero();
        assertThat(reserved).isEqualTo(100);
        assertThat(holds).hasSize(100);
        assertThat(soldOut).isEqualTo(batches * perBatch - 100);
        var stock = shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme")
                .setItemId("batch-race").setRegion("local").build()).getStock();
        assertThat(stock.getAvailable()).isZero();
        assertThat(stock.getHeld()).isEqualTo(100);
        assertThat(shard.checkInvariants().getOk()).isTrue();
    }

    @Test
    void anEmptyOrOversizedBatchIsRefusedAsAWhole() {
        StatusRuntimeException empty = catchThrowableOfType(
                () -> api().reserveBatch(ReserveBatchRequest.getDefaultInstance()), StatusRuntimeException.class);
        assertThat(empty.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(GrpcErrors.errorInfo(empty).orElseThrow().getReason()).isEqualTo(Reason.INVALID_FIELD.name());
        assertThat(empty.getStatus().getDescription()).contains("requests").contains("[1, 1024]");

        ReserveBatchRequest.Builder big = ReserveBatchRequest.newBuilder();
        for (int i = 0; i <= Limits.RESERVE_BATCH_MAX; i++) {
            big.addRequests(reserve("batch-big", "big-" + i, 1));
        }
        StatusRuntimeException tooBig = catchThrowableOfType(() -> api().reserveBatch(big.build()),
                StatusRuntimeException.class);
        assertThat(tooBig.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(tooBig.getStatus().getDescription()).contains("1025 entries");
    }
}
