package io.lastunit.common.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class LongSetTest {

    @Property
    void behavesLikeAHashSet(@ForAll @Size(max = 2_000) List<@LongRange(min = -40, max = 4_000) Long> adds,
                             @ForAll @Size(max = 200) List<@LongRange(min = -50, max = 5_000) Long> probes) {
        LongSet set = new LongSet();
        Set<Long> model = new HashSet<>();
        for (long v : adds) {
            if (v == 0) {
                continue;
            }
            assertThat(set.add(v)).isEqualTo(model.add(v));
            assertThat(set.size()).isEqualTo(model.size());
        }
        for (long v : adds) {
            assertThat(set.contains(v)).isEqualTo(v != 0);
        }
        for (long v : probes) {
            assertThat(set.contains(v)).isEqualTo(model.contains(v));
        }
    }

    @Test
    void keysThatShareTheirLowBits_allStayFindable() {
        LongSet set = new LongSet(4);
        for (long i = 1; i <= 10_000; i++) {
            assertThat(set.add(i << 40)).isTrue();
        }
        assertThat(set.size()).isEqualTo(10_000);
        for (long i = 1; i <= 10_000; i++) {
            assertThat(set.contains(i << 40)).isTrue();
        }
        assertThat(set.contains(10_001L << 40)).isFalse();
        assertThat(set.footprintBytes()).isLessThanOrEqualTo(8L * 32_768);
    }

    @Test
    void zeroIsRefusedAndNeverContained() {
        LongSet set = new LongSet();
        assertThatThrownBy(() -> set.add(0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(set.contains(0)).isFalse();
        assertThatThrownBy(() -> new LongSet(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void clear_forgetsEverything() {
        LongSet set = new LongSet();
        set.add(7);
        set.add(-7);
        set.clear();
        assertThat(set.size()).isZero();
        assertThat(set.contains(7)).isFalse();
        assertThat(set.add(-7)).isTrue();
    }
}
