package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.common.keys.Fingerprints;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The lane's key index stores fingerprints, so "this key was placed here" can be wrong. Here
 * every key has the same fingerprint — the worst case, each new key looks like a retry — and
 * the lane must still sell exactly the stock, once per key, and give each retried key its hold.
 */
class KeyFingerprintCollisionIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    @AfterEach
    void restoreFingerprints() {
        BucketState.fingerprint = Fingerprints::of;
    }

    private static ReserveRequest reserve(String key, int qty) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId("clash").setQuantity(qty)
                .setIdempotencyKey(key).setBuyerId("buyer-" + key).setRegion("local").build();
    }

    @Test
    void everyKeyColliding_sellsExactlyTheStock_andRetriesGetTheirHolds() throws Exception {
        BucketState.fingerprint = key -> 42L;
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            shard.createItem("acme", "clash", 50);
            List<ListenableFuture<ReserveResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 80; i++) {
                calls.add(shard.async().withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS)
                        .reserve(reserve("k" + i, 1)));
            }
            Map<String, String> holds = new HashMap<>();
            int soldOut = 0;
            for (int i = 0; i < calls.size(); i++) {
                ReserveResponse r = calls.get(i).get(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS);
                if (r.getOutcome() == ReserveOutcome.RESERVED) {
                    holds.put("k" + i, r.getHold().getHoldId());
                } else {
                    assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
                    soldOut++;
                }
            }
            assertThat(holds).hasSize(50);
            assertThat(soldOut).isEqualTo(30);

            for (Map.Entry<String, String> e : holds.entrySet()) {
                ReserveResponse retry = shard.blocking().reserve(reserve(e.getKey(), 1));
                assertThat(retry.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
                assertThat(retry.getHold().getHoldId()).isEqualTo(e.getValue());
            }
            // A known key with other parameters is still refused, not mistaken for a new one.
            String taken = holds.keySet().iterator().next();
            StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
                    () -> shard.blocking().reserve(reserve(taken, 2)));
            assertThat(refused).isNotNull();
            assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
            assertThat(GrpcErrors.errorInfo(refused).orElseThrow().getReason())
                    .isEqualTo(Reason.IDEMPOTENCY_KEY_REUSED.name());
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
            assertThat(shard.node().engine().stats().opsApplied()).isPositive();
        }
    }
}
