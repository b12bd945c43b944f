package io.lastunit.common.invariant;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsResponse;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferDirection;
import io.lastunit.api.shard.v1.TransferState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The matcher's named cases: each way a snapshot can miss one side of a transfer, and each refusal. */
class TransferMatcherTest {
    private static final long SINCE = 1_000_000;

    private static Transfer out(String id, String target, long qty, boolean done, long createdAt) {
        return Transfer.newBuilder().setTransferId(id).setDirection(TransferDirection.OUT).setTenantId("t")
                .setItemId("i").setPeerShardId(target).setQuantity(qty)
                .setState(done ? TransferState.DONE : TransferState.PENDING).setCreatedAtMs(createdAt).build();
    }

    private static Transfer in(String id, String source, long qty, long createdAt) {
        return Transfer.newBuilder().setTransferId(id).setDirection(TransferDirection.IN).setTenantId("t")
                .setItemId("i").setPeerShardId(source).setQuantity(qty).setState(TransferState.DONE)
                .setCreatedAtMs(createdAt).build();
    }

    private static ListLevelsResponse snapshot(String shard, long base, long allotment, Transfer... listed) {
        return ListLevelsResponse.newBuilder().setShardId(shard).setTransfersSinceMs(SINCE)
                .addItems(ItemLevel.newBuilder().setTenantId("t").setItemId("i").setBase(base).setAllotment(allotment))
                .addAllTransfers(List.of(listed)).build();
    }

    /** Answers ListTransfers by id from the records each shard holds now, and counts the calls. */
    private static final class Shards implements TransferMatcher.Lookup {
        final Map<String, List<Transfer>> now;
        final List<String> asked = new ArrayList<>();

        Shards(Map<String, List<Transfer>> now) {
            this.now = now;
        }

        @Override
        public List<Transfer> find(String shardId, List<String> ids) {
            asked.add(shardId + ":" + ids);
            return now.getOrDefault(shardId, List.of()).stream().filter(t -> ids.contains(t.getTransferId())).toList();
        }
    }

    private static ItemBalance one(TransferMatcher.Result r) {
        assertThat(r.problems()).isEmpty();
        assertThat(r.balances()).hasSize(1);
        return r.balances().get(0);
    }

    @Test
    void anOutListedWithItsInListed_isNotInFlight() throws InterruptedException {
        Transfer o = out("x", "B", 5, true, SINCE + 10);
        Transfer i = in("x", "A", 5, SINCE + 11);
        Shards shards = new Shards(Map.of());
        ItemBalance b = one(TransferMatcher.match(List.of(snapshot("A", 100, 95, o), snapshot("B", 0, 5, i)),
                t -> true, shards));
        assertThat(b.drift()).isZero();
        assertThat(b.inFlight()).isZero();
        assertThat(shards.asked).isEmpty();
    }

    @Test
    void theTargetReadBeforeTheCredit_countsTheUnitsInFlight() throws InterruptedException {
        Transfer o = out("x", "B", 5, false, SINCE + 10);
        Shards shards = new Shards(Map.of("B", List.of(in("x", "A", 5, SINCE + 20))));
        ItemBalance b = one(TransferMatcher.match(List.of(snapshot("A", 100, 95, o), snapshot("B", 0, 0)),
                t -> true, shards));
        assertThat(b.inFlight()).isEqualTo(5);
        assertThat(b.pending()).containsExactly("x");
        assertThat(b.drift()).isZero();
        assertThat(shards.asked).containsExactly("B:[x]");
    }

    @Test
    void theSourceReadBeforeTheDebit_countsTheCreditAgainstIt() throws InterruptedException {
        Shards shards = new Shards(Map.of("A", List.of(out("x", "B", 5, true, SINCE + 10))));
        ItemBalance b = one(TransferMatcher.match(
                List.of(snapshot("A", 100, 100), snapshot("B", 0, 5, in("x", "A", 5, SINCE + 11))), t -> true, shards));
        assertThat(b.inFlight()).isEqualTo(-5);
        assertThat(b.drift()).isZero();
    }

    @Test
    void anInOlderThanTheWindow_isInTheTargetsSnapshot() throws InterruptedException {
        // A transfer stuck PENDING for long: its IN was credited before the target's window.
        Transfer o = out("x", "B", 5, false, SINCE - 600_000);
        Shards shards = new Shards(Map.of("B", List.of(in("x", "A", 5, SINCE - 500_000))));
        ItemBalance b = one(TransferMatcher.match(List.of(snapshot("A", 100, 95, o), snapshot("B", 0, 5)),
                t -> true, shards));
        assertThat(b.inFlight()).isZero();
        assertThat(b.drift()).isZero();
    }

    @Test
    void anOldOutCompletedInTheWindow_isListed_andItsLateInCountsItInFlight() throws InterruptedException {
        // Created before the window, completed inside it: the shard lists it by done_at; the
        // target was read before the credit.
        Transfer o = out("x", "B", 5, true, SINCE - 600_000);
        Shards shards = new Shards(Map.of("B", List.of(in("x", "A", 5, SINCE + 5))));
        ItemBalance b = one(TransferMatcher.match(List.of(snapshot("A", 100, 95, o), snapshot("B", 0, 0)),
                t -> true, shards));
        assertThat(b.inFlight()).isEqualTo(5);
        assertThat(b.drift()).isZero();
    }

    @Test
    void anInWithAnotherQuantity_driftsByTheDifference() throws InterruptedException {
        Transfer o = out("x", "B", 5, true, SINCE + 10);
        ItemBalance b = one(TransferMatcher.match(
                List.of(snapshot("A", 100, 95, o), snapshot("B", 0, 7, in("x", "A", 7, SINCE + 11))), t -> true,
                new Shards(Map.of())));
        assertThat(b.drift()).isEqualTo(2);
    }

    @Test
    void anInWithoutAnyOut_driftsByItsUnits() throws InterruptedException {
        ItemBalance b = one(TransferMatcher.match(
                List.of(snapshot("A", 100, 100), snapshot("B", 0, 9, in("ghost", "A", 9, SINCE + 11))), t -> true,
                new Shards(Map.of())));
        assertThat(b.drift()).isEqualTo(9);
    }

    @Test
    void anInOnAShardTheOutDidNotName_driftsByItsUnits() throws InterruptedException {
        Transfer o = out("x", "B", 5, true, SINCE + 10);
        ItemBalance b = one(TransferMatcher.match(List.of(snapshot("A", 100, 95, o),
                snapshot("B", 0, 5, in("x", "A", 5, SINCE + 11)), snapshot("C", 0, 5, in("x", "A", 5, SINCE + 12))),
                t -> true, new Shards(Map.of())));
        assertThat(b.drift()).isEqualTo(5);
    }

    @Test
    void anInNamingAnotherTenantsTransfer_driftsByItsUnits_andTheOtherTenantIsNotJudged()
            throws InterruptedException {
        Transfer foreignOut = out("y", "B", 4, true, SINCE - 600_000).toBuilder().setTenantId("moved").build();
        Shards shards = new Shards(Map.of("A", List.of(foreignOut)));
        TransferMatcher.Result r = TransferMatcher.match(
                List.of(snapshot("A", 100, 100), snapshot("B", 0, 4, in("y", "A", 4, SINCE + 3))), t -> t.equals("t"),
                shards);
        ItemBalance b = one(r);
        assertThat(b.item()).isEqualTo(new ItemKey("t", "i"));
        assertThat(b.drift()).isEqualTo(4);
    }

    @Test
    void otherTenantsRecordsAreIgnored() throws InterruptedException {
        Transfer foreign = out("y", "B", 3, false, SINCE + 1).toBuilder().setTenantId("moved").build();
        Shards shards = new Shards(Map.of());
        ItemBalance b = one(TransferMatcher.match(List.of(snapshot("A", 100, 100, foreign), snapshot("B", 0, 0)),
                t -> t.equals("t"), shards));
        assertThat(b.drift()).isZero();
        assertThat(shards.asked).isEmpty();
    }

    @Test
    void aShardWithoutASnapshot_aTruncatedOne_aFailedLookup_orAnUnknownShard_areNotJudged()
            throws InterruptedException {
        ListLevelsResponse old = snapshot("A", 100, 100).toBuilder().setTransfersSinceMs(0).build();
        assertThat(TransferMatcher.match(List.of(old), t -> true, new Shards(Map.of())).problems())
                .singleElement().asString().contains("shard A", "without a transfer snapshot");

        ListLevelsResponse full = snapshot("A", 100, 100).toBuilder().setTransfersTruncated(true).build();
        TransferMatcher.Result truncated = TransferMatcher.match(List.of(full), t -> true, new Shards(Map.of()));
        assertThat(truncated.problems()).singleElement().asString().contains("more transfer records");
        assertThat(truncated.balances()).isEmpty();

        TransferMatcher.Lookup down = (shard, ids) -> {
            throw new TransferMatcher.LookupFailed("shard " + shard + ": UNAVAILABLE");
        };
        TransferMatcher.Result failed = TransferMatcher.match(
                List.of(snapshot("A", 100, 95, out("x", "B", 5, false, SINCE + 1)), snapshot("B", 0, 0)), t -> true,
                down);
        assertThat(failed.problems()).containsExactly("shard B: UNAVAILABLE");
        assertThat(failed.balances()).isEmpty();

        TransferMatcher.Result unknown = TransferMatcher.match(
                List.of(snapshot("A", 100, 95, out("x", "Z", 5, false, SINCE + 1))), t -> true, new Shards(Map.of()));
        assertThat(unknown.problems()).singleElement().asString().contains("shard Z", "not a shard of this cell");
    }
}
