package io.lastunit.common.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.hash.Hashing;
import io.lastunit.api.topology.v1.ShardInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PlacementTest {
    private static final int ITEMS = 10_000;

    static ShardInfo shard(String id) {
        return ShardInfo.newBuilder().setShardId(id).setCell("c1").setRegion("eu").setAddress(id + ":9000").build();
    }

    static List<ShardInfo> shards(String... ids) {
        List<ShardInfo> list = new ArrayList<>();
        for (String id : ids) {
            list.add(shard(id));
        }
        return list;
    }

    /** These picks decide where stock lives. If this fails, stock would be looked for on the wrong shard. */
    @ParameterizedTest
    @CsvSource({
        "acme, sku-1, s1",
        "acme, sku-2, s1",
        "acme, sku-3, s4",
        "globex, sku-1, s2",
        "globex, ticket-42, s3",
        "initech, x, s1",
        "t, i, s4",
    })
    void pick_isPinnedForever(String tenant, String item, String expected) {
        assertThat(Placement.pick(tenant, item, shards("s1", "s2", "s3", "s4")).getShardId()).isEqualTo(expected);
    }

    @Test
    void score_isPinnedForever() {
        assertThat(Placement.score("acme", "sku-1", "s1")).isEqualTo(0xa8c6a6171ac140b8L);
        assertThat(Placement.score("globex", "ticket-42", "s3")).isEqualTo(0x9d080096296c25f9L);
    }

    @Test
    void score_separatesTenantFromItem() {
        assertThat(Placement.score("ab", "c", "s1")).isNotEqualTo(Placement.score("a", "bc", "s1"));
        assertThat(Placement.score("a", "b", "cs1")).isNotEqualTo(Placement.score("a", "bc", "s1"));
    }

    @Test
    void pick_spreadsItemsEvenly_overFourShards() {
        List<ShardInfo> four = shards("s1", "s2", "s3", "s4");
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < ITEMS; i++) {
            counts.merge(Placement.pick("acme", "item-" + i, four).getShardId(), 1, Integer::sum);
        }
        assertThat(counts).containsOnlyKeys("s1", "s2", "s3", "s4");
        int even = ITEMS / 4;
        assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween((int) (even * 0.85), (int) (even * 1.15)));
    }

    @Test
    void pick_movesOnlyTheRemovedShardsItems_whenAShardIsRemoved() {
        List<ShardInfo> four = shards("s1", "s2", "s3", "s4");
        List<ShardInfo> three = shards("s1", "s2", "s4");
        int moved = 0;
        for (int i = 0; i < ITEMS; i++) {
            String item = "item-" + i;
            String before = Placement.pick("acme", item, four).getShardId();
            String after = Placement.pick("acme", item, three).getShardId();
            if (before.equals("s3")) {
                assertThat(after).isNotEqualTo("s3");
                moved++;
            } else {
                assertThat(after).as(item).isEqualTo(before);
            }
        }
        assertThat(moved).as("items that were on s3").isGreaterThan(0);
    }

    @Test
    void pick_ignoresTheOrderOfTheShardList() {
        List<ShardInfo> sorted = shards("s1", "s2", "s3", "s4", "s5");
        Random random = new Random(42);
        for (int round = 0; round < 20; round++) {
            List<ShardInfo> shuffled = new ArrayList<>(sorted);
            Collections.shuffle(shuffled, random);
            for (int i = 0; i < 500; i++) {
                String item = "item-" + i;
                assertThat(Placement.pick("acme", item, shuffled)).isEqualTo(Placement.pick("acme", item, sorted));
            }
        }
    }

    @Test
    void pick_dependsOnTheTenant() {
        List<ShardInfo> four = shards("s1", "s2", "s3", "s4");
        int differ = 0;
        for (int i = 0; i < 1000; i++) {
            if (!Placement.pick("acme", "item-" + i, four).equals(Placement.pick("globex", "item-" + i, four))) {
                differ++;
            }
        }
        assertThat(differ).isGreaterThan(600);
    }

    @Test
    void pick_returnsTheOnlyShard() {
        assertThat(Placement.pick("acme", "x", shards("only")).getShardId()).isEqualTo("only");
    }

    @Test
    void pick_refusesAnEmptyList() {
        assertThatThrownBy(() -> Placement.pick("acme", "sku-1", List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tenant=acme")
                .hasMessageContaining("item=sku-1");
    }
    /** The hash {@code pick} computes itself is Guava's murmur3_128 (seed 0) over every length of tail. */
    @Test
    void murmur3x64h1_isGuavasMurmur3_128() {
        Random random = new Random(7);
        for (int len = 0; len <= 80; len++) {
            for (int round = 0; round < 50; round++) {
                byte[] data = new byte[len + random.nextInt(4)]; // a buffer longer than what is hashed, as in pick
                random.nextBytes(data);
                long guava = Hashing.murmur3_128(0).hashBytes(data, 0, len).asLong();
                assertThat(Placement.murmur3x64h1(data, len)).as("length %d", len).isEqualTo(guava);
            }
        }
    }

    /**
     * {@code pick} picks what the stable definition ({@link Placement#score} through Guava's
     * hasher) picks, for keys and shard ids of every kind: ASCII, other scripts, pairs and unpaired
     * surrogates, empty strings, long ones.
     */
    @Test
    void pick_agreesWithScore_forAnyStrings() {
        Random random = new Random(11);
        for (int round = 0; round < 3000; round++) {
            String tenant = randomString(random);
            String item = randomString(random);
            List<ShardInfo> candidates = new ArrayList<>();
            int n = 1 + random.nextInt(6);
            for (int i = 0; i < n; i++) {
                candidates.add(shard(randomString(random) + "#" + i));
            }
            ShardInfo expected = null;
            long best = 0;
            for (ShardInfo s : candidates) {
                long score = Placement.score(tenant, item, s.getShardId());
                int c = Long.compareUnsigned(score, best);
                if (expected == null || c > 0 || (c == 0 && s.getShardId().compareTo(expected.getShardId()) < 0)) {
                    expected = s;
                    best = score;
                }
            }
            assertThat(Placement.pick(tenant, item, candidates)).as("%s / %s", tenant, item).isEqualTo(expected);
        }
    }

    private static String randomString(Random random) {
        int len = random.nextInt(5) == 0 ? random.nextInt(120) : random.nextInt(12);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < len; i++) {
            switch (random.nextInt(6)) {
                case 0 -> b.append((char) (0x80 + random.nextInt(0x780))); // two UTF-8 bytes
                case 1 -> b.append((char) (0x800 + random.nextInt(0xd000 - 0x800))); // three
                case 2 -> b.appendCodePoint(0x10000 + random.nextInt(0x1000)); // a surrogate pair, four
                case 3 -> b.append((char) (0xd800 + random.nextInt(0x800))); // a lone surrogate
                default -> b.append((char) (0x20 + random.nextInt(0x5f))); // ASCII
            }
        }
        return b.toString();
    }
}
