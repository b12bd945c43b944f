package io.lastunit.common.keys;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FingerprintsTest {

    @Test
    void aMillionKeysOfOneRun_haveDistinctNonZeroFingerprints() {
        LongSet seen = new LongSet(1_000_000);
        for (int i = 0; i < 1_000_000; i++) {
            long f = Fingerprints.of("load-mx29c6rv-" + i);
            assertThat(f).isNotZero();
            assertThat(seen.add(f)).as("fingerprint of key %d repeats an earlier one", i).isTrue();
        }
    }

    @Test
    void isAFunctionOfTheWholeString() {
        assertThat(Fingerprints.of("key-1")).isEqualTo(Fingerprints.of(new String("key-1".toCharArray())));
        assertThat(Fingerprints.of("key-1")).isNotEqualTo(Fingerprints.of("key-2"));
        assertThat(Fingerprints.of("")).isNotEqualTo(Fingerprints.of("\0"));
        assertThat(Fingerprints.of("ab")).isNotEqualTo(Fingerprints.of("ba"));
    }

    @Test
    void pairs_doNotDependOnWhereTheSplitIs() {
        assertThat(Fingerprints.of("ab", "c")).isNotEqualTo(Fingerprints.of("a", "bc"));
        assertThat(Fingerprints.of("t", "k")).isNotEqualTo(Fingerprints.of("tk"));
        assertThat(Fingerprints.of("t", "k")).isEqualTo(Fingerprints.of("t", "k"));
    }

    @Test
    void oneBitOfInput_changesAboutHalfTheOutputBits() {
        long total = 0;
        int n = 10_000;
        for (int i = 0; i < n; i++) {
            total += Long.bitCount(Fingerprints.of("k" + i) ^ Fingerprints.of("k" + (i ^ 1)));
        }
        double mean = (double) total / n;
        assertThat(mean).isBetween(30.0, 34.0);
    }
}
