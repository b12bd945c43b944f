package io.lastunit.shard.escrow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which open bucket a Reserve's idempotency key goes to ({@link ItemLedger#bucketFor}). */
class ItemLedgerTest {
    private static ItemLedger ledger(int... open) {
        return new ItemLedger("acme", "hat", 8, "local", List.of("local"), open, false);
    }

    /**
     * These picks decide which bucket's key set answers a retry. If this fails, a retry after a
     * restart (or on another node of the same version) would miss its key and cost a read.
     */
    @ParameterizedTest
    @CsvSource({
        "k1, 5, 5",
        "k2, 4, 5",
        "order-4711, 7, 7",
        "buyer-9:cart-3, 1, 0",
        "'', 0, 0",
        "retry-0001, 3, 2",
        "zz, 6, 7",
    })
    void bucketFor_isPinnedForever(String key, int ofEight, int ofFourOpen) {
        assertThat(ledger(0, 1, 2, 3, 4, 5, 6, 7).bucketFor(key)).isEqualTo(ofEight);
        assertThat(ledger(0, 2, 5, 7).bucketFor(key)).isEqualTo(ofFourOpen);
    }

    @Test
    void bucketFor_withOneOpenBucket_isThatBucket() {
        assertThat(ledger(0).bucketFor("k1")).isZero();
        assertThat(ledger(3).bucketFor("k1")).isEqualTo(3);
    }

    @Test
    void bucketFor_afterTheCollapse_isBucket0() {
        ItemLedger l = ledger(0, 1, 2, 3, 4, 5, 6, 7);
        l.closeAllBut0();
        assertThat(l.bucketFor("k1")).isZero();
    }

    @Test
    void bucketFor_spreadsKeysEvenly_overEightBuckets() {
        ItemLedger l = ledger(0, 1, 2, 3, 4, 5, 6, 7);
        Map<Integer, Integer> counts = new HashMap<>();
        int keys = 16_000;
        for (int i = 0; i < keys; i++) {
            counts.merge(l.bucketFor("key-" + i), 1, Integer::sum);
        }
        assertThat(counts).hasSize(8);
        int even = keys / 8;
        assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween((int) (even * 0.9), (int) (even * 1.1)));
    }
}
