package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.topology.v1.ShardInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ShardSpecTest {

    @Test
    void parse_idRegionHostPort() {
        ShardSpec s = ShardSpec.parse("big-1=eu-west=10.0.0.5:7443");
        assertThat(s).isEqualTo(new ShardSpec("big-1", "eu-west", "10.0.0.5", 7443));
        assertThat(s.address()).isEqualTo("10.0.0.5:7443");
        assertThat(s.toShardInfo("big")).isEqualTo(ShardInfo.newBuilder().setShardId("big-1").setCell("big")
                .setRegion("eu-west").setAddress("10.0.0.5:7443").build());
    }

    @Test
    void parse_hostNameAndIpv6() {
        assertThat(ShardSpec.parse("s=local=shard-1.internal:1").host()).isEqualTo("shard-1.internal");
        ShardSpec v6 = ShardSpec.parse("s=local=[::1]:7443");
        assertThat(v6.host()).isEqualTo("::1");
        assertThat(v6.address()).isEqualTo("[::1]:7443");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "big-1                  | is not ID=REGION=HOST:PORT",
            "big-1=eu               | is not ID=REGION=HOST:PORT",
            "big-1=eu=h:1=x         | is not ID=REGION=HOST:PORT",
            "=eu=h:1                | shard id ''",
            "a/b=eu=h:1             | shard id 'a/b'",
            "b=e u=h:1              | region 'e u'",
            "b==h:1                 | region ''",
            "b=eu=h                 | is not HOST:PORT",
            "b=eu=h:                | is not HOST:PORT",
            "b=eu=:7443             | is not HOST:PORT",
            "b=eu=h:x               | port 'x' is not a number",
            "b=eu=h:0               | port 0 is outside [1, 65535]",
            "b=eu=h:65536           | port 65536 is outside [1, 65535]"})
    void parse_refusesBadSpecs(String text, String message) {
        assertThatThrownBy(() -> ShardSpec.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void parse_refusesOverlongIds() {
        assertThatThrownBy(() -> ShardSpec.parse("x".repeat(65) + "=eu=h:1"))
                .hasMessageContaining("1..64 printable ASCII");
        assertThat(ShardSpec.parse("x".repeat(64) + "=eu=h:1").shardId()).hasSize(64);
    }
}
