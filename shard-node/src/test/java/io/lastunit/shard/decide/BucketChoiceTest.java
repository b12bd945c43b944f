package io.lastunit.shard.decide;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Pins where keys go: a change of the hash would send a retry to another bucket than its first
 * try, whose key set would then not know it. The values are what the hash gives today.
 */
class BucketChoiceTest {
    @Test
    void oneOpenBucket_takesEveryKey() {
        assertThat(BucketChoice.bucketFor(new int[] {0}, "anything")).isZero();
        assertThat(BucketChoice.bucketFor(new int[] {3}, "anything")).isEqualTo(3);
    }

    @Test
    void fixedKeys_fixedBuckets() {
        int[] four = {0, 1, 2, 3};
        StringBuilder got = new StringBuilder();
        for (String k : new String[] {"a", "b", "key-1", "key-2", "ann-1", "order-42", "", "z"}) {
            got.append(BucketChoice.bucketFor(four, k));
        }
        assertThat(got.toString()).isEqualTo(PINNED);
    }

    @Test
    void keysSpreadOverTheOpenBuckets() {
        int[] open = {0, 2, 5};
        int[] count = new int[6];
        for (int n = 0; n < 30_000; n++) {
            count[BucketChoice.bucketFor(open, "k" + n)]++;
        }
        assertThat(count[1] + count[3] + count[4]).isZero();
        for (int b : open) {
            assertThat(count[b]).isBetween(9_000, 11_000);
        }
    }

    private static final String PINNED = "30010201";
}
