package io.lastunit.shard.decide;

import static io.lastunit.shard.decide.Table.I;
import static io.lastunit.shard.decide.Table.NOW;
import static io.lastunit.shard.decide.Table.T;
import static io.lastunit.shard.decide.Table.hold;
import static io.lastunit.shard.decide.Table.item;
import static io.lastunit.shard.decide.Table.keyFor;
import static io.lastunit.shard.decide.Table.row;
import static io.lastunit.shard.decide.Table.slot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.inventory.v1.HoldState;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The batch rules as tables: inputs in, outcomes and writes out, no database. */
class BatchDeciderTest {

    private static final ItemFacts ONE = item(1);

    @Nested
    class Reserves {
        @Test
        void reservesWhileUnitsLast_thenSoldOut_multiUnitNearTheEnd() {
            Decided d = new Table().bucket(0, ONE, 3, 0, 0)
                    .reserve(0, "a", 2).reserve(0, "b", 2).reserve(0, "c", 1).reserve(0, "d", 1)
                    .decided();
            assertThat(d.outcomes()).containsExactly(new Outcome.Reserved(2, 60_000), new Outcome.SoldOut(false),
                    new Outcome.Reserved(1, 60_000), new Outcome.SoldOut(false));
            BucketDelta delta = d.deltas().get(slot(0));
            assertThat(delta.available()).isEqualTo(-3);
            assertThat(delta.held()).isEqualTo(3);
            assertThat(delta.taken()).isEqualTo(3);
            assertThat(d.demand().get(new ItemName(T, I))).containsExactly(4, 2);
        }

        @Test
        void askedLifetimeWins_overTheItems() {
            Table t = new Table().bucket(0, ONE, 1, 0, 0);
            t.calls.add(new Call.Reserve(0, slot(0), "a", "fp", "eu", "b", 1, 5_000, null));
            assertThat(t.decided().outcome(0)).isEqualTo(new Outcome.Reserved(1, 5_000));
        }

        @Test
        void soldOut_inOneRegionOfSeveral_saysTheRegionIsDry_unlessCollapsedHome() {
            ItemFacts multi = Table.regions(ONE, List.of("eu", "us"), false);
            assertThat(new Table().bucket(0, multi, 0, 1, 0).reserve(0, "a", 1).decided().outcome(0))
                    .isEqualTo(new Outcome.SoldOut(true));
            ItemFacts collapsed = Table.regions(ONE, List.of("eu", "us"), true);
            assertThat(new Table().bucket(0, collapsed, 0, 1, 0).reserve(0, "a", 1).decided().outcome(0))
                    .isEqualTo(new Outcome.SoldOut(false));
        }

        @Test
        void perBuyerCap_needsTheBuyersUsage_thenCountsThisBatchToo() {
            ItemFacts capped = item(1, 3);
            Table t = new Table().bucket(0, capped, 10, 0, 0)
                    .reserve(0, "a", "ann", 2, "f1").reserve(0, "b", "ann", 2, "f2").reserve(0, "c", "bob", 3, "f3");
            Needs n = t.needs();
            assertThat(n.usage()).containsExactly(new BuyerName(T, I, "ann"), new BuyerName(T, I, "bob"));
            t.loaded.usage(n.usage(), Map.of(new BuyerName(T, I, "bob"), 1L));
            Decided d = t.decided();
            assertThat(d.outcomes()).containsExactly(new Outcome.Reserved(2, 60_000), new Outcome.LimitExceeded(),
                    new Outcome.LimitExceeded());
            assertThat(d.usageTaken()).containsExactlyEntriesOf(Map.of(new BuyerName(T, I, "ann"),
                    new Decided.UsageTake(0, 2)));
        }

        @Test
        void usageGivenBackByAReleaseInTheBatch_countsForItsReserves() {
            ItemFacts capped = item(1, 2);
            HoldFacts h = hold(0, 2, "old", NOW + 1_000);
            Table t = new Table().bucket(0, capped, 0, 2, 0).loadedHolds(h)
                    .reserve(0, "new", "buyer", 2, "f").transition(h, Call.Kind.RELEASE, "");
            t.loaded.usage(Set.of(new BuyerName(T, I, "buyer")), Map.of(new BuyerName(T, I, "buyer"), 2L));
            Decided d = t.decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Reserved(2, 60_000));
            assertThat(d.usageTaken()).containsExactlyEntriesOf(Map.of(new BuyerName(T, I, "buyer"),
                    new Decided.UsageTake(0, 2)));
            assertThat(d.usageGiven()).containsExactly(h);
        }

        @Test
        void noUsageIsRead_whenTheBucketIsDry() {
            Decided d = new Table().bucket(0, item(1, 3), 0, 1, 0).reserve(0, "a", 1).decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.SoldOut(false));
        }

        @Test
        void pausedItem_sellsNothing_butARetryGetsItsHold_andItsHoldsStillChange() {
            ItemFacts paused = Table.state(ONE, ItemState.PAUSED);
            HoldFacts first = hold(0, 1, "k", NOW + 1_000_000);
            Table t = new Table().bucket(0, paused, 5, 1, 0, "k").loadedHolds(first)
                    .reserve(0, "a", 1).reserve(0, "k", 1).transition(first, Call.Kind.CONFIRM, "o1");
            t.loadedKeys(Set.of(new KeyName(T, I, "k")), first);
            Decided d = t.decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.NotActive(ItemState.PAUSED));
            assertThat(d.outcome(1)).isEqualTo(new Outcome.Existing(first));
            assertThat(d.outcome(2)).isEqualTo(new Outcome.Applied(Call.Kind.CONFIRM, row(first, HoldState.SOLD, "o1")));
        }

        @Test
        void bucketNotOnThisShard() {
            Decided d = new Table().reserve(0, "a", 1).decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.NoBucket());
        }
    }

    @Nested
    class Keys {
        @Test
        void sameKeyTwiceInOneBatch_sameRequestFollows_otherRequestWaitsForTheFirst() {
            Decided d = new Table().bucket(0, ONE, 5, 0, 0)
                    .reserve(0, "k", "b", 1, "same").reserve(0, "k", "b", 1, "same").reserve(0, "k", "b", 2, "other")
                    .decided();
            assertThat(d.outcomes()).containsExactly(new Outcome.Reserved(1, 60_000), new Outcome.Follow(0),
                    new Outcome.Carry());
            assertThat(d.deltas().get(slot(0)).taken()).isEqualTo(1);
        }

        @Test
        void knownKey_isLookedUp_thenAnsweredFromItsFirstUse() {
            HoldFacts first = hold(0, 1, "k", NOW + 1);
            Table t = new Table().bucket(0, ONE, 0, 1, 0, "k").reserve(0, "k", 1).reserve(0, "k2", 1);
            Needs n = t.needs();
            assertThat(n.keys()).containsExactly(new KeyName(T, I, "k"));
            t.loadedKeys(n.keys(), first);
            Decided d = t.decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Existing(first));
            assertThat(d.outcome(1)).isEqualTo(new Outcome.SoldOut(false));
        }

        @Test
        void knownKey_otherParameters_isReused() {
            HoldFacts first = hold(0, 2, "k", NOW + 1);
            Table t = new Table().bucket(0, ONE, 5, 2, 0, "k").reserve(0, "k", 1);
            t.loadedKeys(Set.of(new KeyName(T, I, "k")), first);
            assertThat(t.decided().outcome(0)).isEqualTo(new Outcome.KeyReused(first));
        }

        @Test
        void forwardedKey_isForwardedAgain_andAClaimedKeyIsNotAReservesHold() {
            HoldFacts fwd = row(hold(0, 1, "k", NOW + 1), HoldState.FORWARDED, null);
            Table t = new Table().bucket(0, ONE, 5, 0, 0, "k").reserve(0, "k", 1);
            t.loadedKeys(Set.of(new KeyName(T, I, "k")), fwd);
            assertThat(t.decided().outcome(0)).isEqualTo(new Outcome.ForwardedAgain(fwd));

            HoldFacts claimed = row(hold(0, 1, "k", NOW + 1), HoldState.CLAIMED, null);
            Table u = new Table().bucket(0, ONE, 5, 0, 0, "k").reserve(0, "k", 1);
            u.loadedKeys(Set.of(new KeyName(T, I, "k")), claimed);
            assertThat(u.decided().outcome(0)).isEqualTo(new Outcome.KeyReused(claimed));
        }

        @Test
        void indexNamedAKeyTheTableLacks_aCollision_isDecidedAsNew() {
            Table t = new Table().bucket(0, ONE, 5, 0, 0, "k").reserve(0, "k", 1);
            t.loadedKeys(Set.of(new KeyName(T, I, "k")));
            assertThat(t.decided().outcome(0)).isEqualTo(new Outcome.Reserved(1, 60_000));
        }

        @Test
        void keyTheDatabaseFoundInUse_isLookedUpAlthoughTheIndexMissesIt() {
            Table t = new Table().bucket(0, ONE, 5, 0, 0).reserve(0, "k", 1);
            t.lookUp.add(new KeyName(T, I, "k"));
            assertThat(t.needs().keys()).containsExactly(new KeyName(T, I, "k"));
        }

        @Test
        void incompleteIndex_confirmsASoldOutAgainstTheTable() {
            Table t = new Table().bucket(0, ONE, 0, 1, 0, Long.MAX_VALUE, false).reserve(0, "k", 1).reserve(0, "n", 1);
            Needs n = t.needs();
            assertThat(n.keys()).containsExactly(new KeyName(T, I, "k"), new KeyName(T, I, "n"));
            HoldFacts first = hold(0, 1, "k", NOW + 1);
            t.loadedKeys(n.keys(), first);
            assertThat(t.decided().outcomes()).containsExactly(new Outcome.Existing(first), new Outcome.SoldOut(false));
        }

        @Test
        void incompleteIndex_withUnitsLeft_placesWithoutALookup() {
            Decided d = new Table().bucket(0, ONE, 5, 0, 0, Long.MAX_VALUE, false).reserve(0, "k", 1).decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Reserved(1, 60_000));
        }
    }

    @Nested
    class Escrow {
        private final ItemFacts four = item(4);

        @Test
        void keyOfAnotherOpenBucket_isRerouted() {
            String k = keyFor(four, 2, "k");
            Decided d = new Table().bucket(0, four, 5, 0, 0).reserve(0, k, 1).decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Reroute(2));
        }

        @Test
        void closedBucketAfterCollapse_sendsEveryNewKeyToBucket0() {
            ItemFacts collapsed = Table.open(four, 0);
            String k = keyFor(four, 2, "k");
            Decided d = new Table().bucket(2, collapsed, 0, 0, 0).reserve(2, k, 1).decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Reroute(0));
        }

        @Test
        void dryBucketWithRichSiblings_asksToBorrowWhatAllItsReservesMiss_thenSells() {
            String a = keyFor(four, 1, "a");
            String b = keyFor(four, 1, "b");
            Table t = new Table().bucket(1, four, 1, 0, 0).reserve(1, a, 2).reserve(1, b, 3);
            Needs n = t.needs();
            assertThat(n.borrows()).containsExactlyEntriesOf(Map.of(slot(1), 4L));
            assertThat(n.onlyBorrows()).isTrue();
            assertThat(n.taken()).containsEntry(slot(1), 5L);
            // the lane borrowed 6 units into the bucket, then decides again with the new counters
            Table after = new Table().bucket(1, four, 7, 0, 0).reserve(1, a, 2).reserve(1, b, 3);
            after.loaded.borrowed(slot(1), BorrowResult.BORROWED);
            assertThat(after.decided().outcomes()).containsExactly(new Outcome.Reserved(2, 60_000),
                    new Outcome.Reserved(3, 60_000));
        }

        @Test
        void borrowThatFoundTooLittle_soldOut_waitForSweepOrClosed_carries() {
            String a = keyFor(four, 1, "a");
            for (BorrowResult r : BorrowResult.values()) {
                Table t = new Table().bucket(1, four, 1, 0, 0).reserve(1, a, 2);
                t.loaded.borrowed(slot(1), r);
                Outcome expected = switch (r) {
                    case BORROWED, NOTHING -> new Outcome.SoldOut(false);
                    case WAIT_FOR_SWEEP, CLOSED -> new Outcome.Carry();
                };
                assertThat(t.decided().outcome(0)).as(r.name()).isEqualTo(expected);
            }
        }

        @Test
        void oneBucketItem_neverBorrows() {
            assertThat(new Table().bucket(0, ONE, 1, 0, 0).reserve(0, "a", 2).decided().outcome(0))
                    .isEqualTo(new Outcome.SoldOut(false));
        }

        @Test
        void unitsLentUnseen_areNotSold() {
            Table t = new Table().reserve(0, "a", 2);
            t.buckets.put(slot(0), new BucketFacts(slot(0), ONE, 3, 3, 0, 0, 2, Long.MAX_VALUE, noKeys()));
            assertThat(t.decided().outcome(0)).isEqualTo(new Outcome.SoldOut(false));
        }

        @Test
        void collapsedHomeItem_forwardsOtherRegions_andSellsAtHome() {
            ItemFacts home = Table.regions(ONE, List.of("eu", "us"), true);
            Decided d = new Table().bucket(0, home, 5, 0, 0).reserveIn(0, "a", "us", 1).reserveIn(0, "b", "eu", 1)
                    .decided();
            assertThat(d.outcomes()).containsExactly(new Outcome.Recorded(HoldState.FORWARDED),
                    new Outcome.Reserved(1, 60_000));
        }

        @Test
        void claims_recordedAtHome_refusedOtherwise() {
            ItemFacts multi = Table.regions(ONE, List.of("eu", "us"), false);
            Decided d = new Table().bucket(0, multi, 5, 0, 0)
                    .claim(0, "a", "us", "eu").claim(0, "b", "us", "us").claim(0, "c", "eu", "eu")
                    .claim(0, "d", "ap", "eu").decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Recorded(HoldState.CLAIMED));
            assertThat(((Outcome.ClaimRefused) d.outcome(1)).field()).isEqualTo("home_region");
            assertThat(((Outcome.ClaimRefused) d.outcome(2)).field()).isEqualTo("request.region");
            assertThat(((Outcome.ClaimRefused) d.outcome(3)).field()).isEqualTo("request.region");
            assertThat(d.deltas()).isEmpty();
            Decided single = new Table().bucket(0, ONE, 5, 0, 0).claim(0, "a", "us", "eu").decided();
            assertThat(((Outcome.ClaimRefused) single.outcome(0)).message()).contains("one region only");
        }
    }

    @Nested
    class Transitions {
        private final HoldFacts h = hold(0, 2, "k", NOW + 1_000_000);

        @Test
        void holdRowsAreLoadedFirst() {
            Table t = new Table().bucket(0, ONE, 0, 2, 0).transition(h, Call.Kind.CONFIRM, "o1");
            assertThat(t.needs().holds()).containsExactly(h.holdId());
        }

        @Test
        void duplicateConfirms_firstApplies_sameRefIsOk_otherRefMismatches() {
            Table t = new Table().bucket(0, ONE, 0, 2, 0).loadedHolds(h);
            for (int n = 0; n < 50; n++) {
                t.transition(h, Call.Kind.CONFIRM, n == 49 ? "o2" : "o1");
            }
            Decided d = t.decided();
            HoldFacts sold = row(h, HoldState.SOLD, "o1");
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Applied(Call.Kind.CONFIRM, sold));
            for (int n = 1; n < 49; n++) {
                assertThat(d.outcome(n)).isEqualTo(new Outcome.Unchanged(sold));
            }
            assertThat(d.outcome(49)).isEqualTo(new Outcome.Refused(Outcome.Refusal.ORDER_REF_MISMATCH, HoldState.SOLD,
                    sold));
            assertThat(d.steps()).hasSize(1);
            assertThat(d.deltas().get(slot(0)).sold()).isEqualTo(2);
        }

        @Test
        void duplicateReleases_andAConfirmRacingThem() {
            Table t = new Table().bucket(0, item(1, 5), 0, 2, 0).loadedHolds(h);
            t.transition(h, Call.Kind.RELEASE, "").transition(h, Call.Kind.RELEASE, "")
                    .transition(h, Call.Kind.CONFIRM, "o1");
            Decided d = t.decided();
            HoldFacts released = row(h, HoldState.RELEASED, null);
            assertThat(d.outcomes()).containsExactly(new Outcome.Applied(Call.Kind.RELEASE, released),
                    new Outcome.Refused(Outcome.Refusal.NOT_HELD, HoldState.RELEASED, released),
                    new Outcome.Refused(Outcome.Refusal.NOT_HELD, HoldState.RELEASED, released));
            assertThat(d.deltas().get(slot(0)).credited()).isEqualTo(2);
            assertThat(d.usageGiven()).containsExactly(h);
        }

        @Test
        void extendOnce_thenConfirm_inTwoRounds() {
            Table t = new Table().bucket(0, ONE, 0, 2, 0).loadedHolds(h);
            t.transition(h, Call.Kind.EXTEND, "").transition(h, Call.Kind.EXTEND, "")
                    .transition(h, Call.Kind.CONFIRM, "o1");
            Decided d = t.decided();
            HoldFacts extended = new HoldFacts(h.holdId(), h.slot(), h.region(), h.qty(), h.buyerId(),
                    h.idempotencyKey(), h.fingerprint(), HoldState.HELD, h.createdAtMicros(),
                    h.expiresAtMicros() + 30_000_000L, true, null);
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Applied(Call.Kind.EXTEND, extended));
            assertThat(d.outcome(1)).isEqualTo(new Outcome.Refused(Outcome.Refusal.ALREADY_EXTENDED, HoldState.HELD,
                    extended));
            assertThat(d.steps()).extracting(Decided.Step::round).containsExactly(0, 1);
        }

        @Test
        void expiredHold_isNotHeld_unknownOrForeignHold_isNotFound() {
            HoldFacts due = hold(0, 1, "d", NOW);
            HoldFacts other = new HoldFacts(h.holdId(), h.slot(), "us", h.qty(), h.buyerId(), h.idempotencyKey(),
                    h.fingerprint(), HoldState.HELD, h.createdAtMicros(), h.expiresAtMicros(), false, null);
            Table t = new Table().bucket(0, ONE, 0, 3, 0).loadedHolds(due, other);
            t.transition(due, Call.Kind.CONFIRM, "o").transition(h, Call.Kind.RELEASE, "");
            t.loaded.holds(Set.of(hold(0, 1, "gone", NOW).holdId()), List.of());
            t.transition(hold(0, 1, "gone", NOW), Call.Kind.EXTEND, "");
            Decided d = t.decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Refused(Outcome.Refusal.NOT_HELD, HoldState.EXPIRED, due));
            assertThat(d.outcome(1)).isEqualTo(new Outcome.Refused(Outcome.Refusal.NOT_FOUND, null, null));
            assertThat(d.outcome(2)).isEqualTo(new Outcome.Refused(Outcome.Refusal.NOT_FOUND, null, null));
        }

        @Test
        void releaseGivesBack_toAReserveOfTheSameBatch() {
            Table t = new Table().bucket(0, ONE, 0, 2, 0).loadedHolds(h);
            t.reserve(0, "n", 2).transition(h, Call.Kind.RELEASE, "");
            Decided d = t.decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Reserved(2, 60_000));
            assertThat(d.deltas().get(slot(0)).available()).isZero();
        }
    }

    @Nested
    class Expiry {
        @Test
        void dueBucket_loadsItsDueHolds_andTheirUnitsSellAgain() {
            HoldFacts due = hold(0, 2, "old", NOW - 5);
            Table t = new Table().bucket(0, item(1, 9), 0, 2, 0, NOW - 5, true, "old").reserve(0, "new", 1).sweep(0);
            assertThat(t.needs().due()).containsExactly(slot(0));
            t.loaded.due(slot(0), new Loaded.Due(List.of(due), Long.MAX_VALUE));
            Needs usage = t.needs();
            t.loaded.usage(usage.usage(), Map.of());
            Decided d = t.decided();
            assertThat(d.outcomes()).containsExactly(new Outcome.Reserved(1, 60_000), new Outcome.Swept(1));
            assertThat(d.expired()).containsExactly(due);
            assertThat(d.usageGiven()).containsExactly(due);
            assertThat(d.nextDue()).containsEntry(slot(0), Long.MAX_VALUE);
            assertThat(d.deltas().get(slot(0)).credited()).isEqualTo(2);
        }

        @Test
        void transitionOfAHoldExpiredInTheSameBatch_seesItExpired() {
            HoldFacts due = hold(0, 2, "old", NOW - 5);
            Table t = new Table().bucket(0, ONE, 0, 2, 0, NOW - 5, true).transition(due, Call.Kind.CONFIRM, "o");
            t.loaded.due(slot(0), new Loaded.Due(List.of(due), Long.MAX_VALUE));
            Decided d = t.decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Refused(Outcome.Refusal.NOT_HELD, HoldState.EXPIRED,
                    row(due, HoldState.EXPIRED, null)));
        }

        @Test
        void bucketNotDue_isNotSwept() {
            Decided d = new Table().bucket(0, ONE, 1, 0, 0, NOW + 1, true).reserve(0, "a", 1).decided();
            assertThat(d.expired()).isEmpty();
            assertThat(d.nextDue()).isEmpty();
        }

        @Test
        void aLoadedDueHoldThatIsNotDue_isABug() {
            HoldFacts notDue = hold(0, 1, "x", NOW + 5);
            Table t = new Table().bucket(0, ONE, 0, 1, 0).sweep(0);
            t.loaded.due(slot(0), new Loaded.Due(List.of(notDue), Long.MAX_VALUE));
            assertThatThrownBy(t::decide).isInstanceOf(IllegalStateException.class);
        }
    }

    /** FROZEN, IMPORTING and MOVED items: a tenant move's copy, which nothing but the move changes. */
    @Nested
    class MovingItems {
        private final HoldFacts h = hold(0, 2, "k", NOW + 1_000_000);

        @ParameterizedTest
        @EnumSource(value = ItemState.class, names = {"FROZEN", "IMPORTING", "MOVED"})
        void everyCall_isRefusedWithTheState_beforeAnyRowIsAskedFor(ItemState state) {
            ItemFacts moving = Table.state(ONE, state);
            Table t = new Table().bucket(0, moving, 5, 2, 0, "k").reserve(0, "new", 1).reserve(0, "k", 2)
                    .claim(0, "c", "eu", "eu").transition(h, Call.Kind.CONFIRM, "o1").transition(h, Call.Kind.RELEASE, "")
                    .transition(h, Call.Kind.EXTEND, "");
            Decided d = t.decided(); // no key, hold or usage read first: decided at once
            assertThat(d.outcomes()).containsOnly(new Outcome.NotActive(state));
            assertThat(d.deltas()).isEmpty();
            assertThat(d.steps()).isEmpty();
        }

        @ParameterizedTest
        @EnumSource(value = ItemState.class, names = {"FROZEN", "IMPORTING", "MOVED"})
        void dueHolds_doNotExpire_andASweepExpiresNothing(ItemState state) {
            Table t = new Table().bucket(0, Table.state(ONE, state), 0, 2, 0, NOW - 5, true, "k").sweep(0);
            Decided d = t.decided();
            assertThat(d.outcome(0)).isEqualTo(new Outcome.Swept(0));
            assertThat(d.expired()).isEmpty();
            assertThat(d.nextDue()).isEmpty();
        }

        @Test
        void anActiveItemInTheSameBatch_isDecidedAsEver() {
            Table t = new Table().bucket(0, Table.state(ONE, ItemState.FROZEN), 5, 0, 0).reserve(0, "a", 1);
            Slot other = new Slot(T, "other", 0);
            t.buckets.put(other, new BucketFacts(other, ONE, 5, 5, 0, 0, 0, Long.MAX_VALUE, noKeys()));
            t.calls.add(new Call.Reserve(1, other, "b", "fp", "eu", "buyer", 1, 0, null));
            Decided d = t.decided();
            assertThat(d.outcomes()).containsExactly(new Outcome.NotActive(ItemState.FROZEN),
                    new Outcome.Reserved(1, 60_000));
        }
    }

    @Test
    void projectedCountersOutOfBalance_failTheDecision() {
        Table t = new Table().reserve(0, "a", 1);
        t.buckets.put(slot(0), new BucketFacts(slot(0), ONE, 10, 5, 0, 0, 0, Long.MAX_VALUE, noKeys()));
        assertThatThrownBy(t::decide).isInstanceOf(IllegalStateException.class).hasMessageContaining("out of balance");
    }

    static BucketFacts.KeyIndex noKeys() {
        return new BucketFacts.KeyIndex() {
            @Override
            public boolean knows(String k) {
                return false;
            }

            @Override
            public boolean complete() {
                return true;
            }
        };
    }
}
