package io.lastunit.router.route;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** How BalancerClient reads the endpoint znode's data: {@code host:port} or nothing. */
class BalancerClientTest {

    @ParameterizedTest
    @CsvSource({
        "127.0.0.1:7500, 127.0.0.1:7500",
        "'  balancer-0.balancer:7500\n', balancer-0.balancer:7500",
        "[::1]:7500, [::1]:7500",
        "host:1, host:1",
        "host:65535, host:65535"})
    void address_acceptsHostAndPort_trimmed(String data, String expected) {
        assertThat(BalancerClient.address(data.getBytes(StandardCharsets.UTF_8))).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "host", "host:", ":7500", "host:0", "host:65536", "host:-1", "host:port",
        "host:75OO"})
    void address_refusesAnythingElse(String data) {
        assertThat(BalancerClient.address(data.getBytes(StandardCharsets.UTF_8))).isNull();
    }

    @Test
    void address_refusesNoDataAndOverlongData() {
        assertThat(BalancerClient.address(null)).isNull();
        assertThat(BalancerClient.address(("h".repeat(251) + ":7500").getBytes(StandardCharsets.UTF_8))).isNull();
    }
}
