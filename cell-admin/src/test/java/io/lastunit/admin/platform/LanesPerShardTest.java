package io.lastunit.admin.platform;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class LanesPerShardTest {

    @ParameterizedTest(name = "{0} cores, {1} shards -> {2} lanes each")
    @CsvSource({
        "2, 2, 1",   // this kind of host: one writing connection per core
        "1, 2, 1",   // never below one
        "2, 5, 1",
        "8, 2, 4",
        "16, 2, 4",  // never above the shard's own default
        "6, 4, 1",
        "12, 4, 3",
        "4, 1, 4",
    })
    void coresPerShardBetweenOneAndTheShardDefault(int cores, int shards, int lanes) {
        assertThat(LocalPlatform.lanesPerShard(cores, shards)).isEqualTo(lanes);
    }

    @Test
    void refusesNoCoresOrNoShards() {
        assertThatThrownBy(() -> LocalPlatform.lanesPerShard(0, 2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cores=0");
        assertThatThrownBy(() -> LocalPlatform.lanesPerShard(2, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shards=0");
    }
}
