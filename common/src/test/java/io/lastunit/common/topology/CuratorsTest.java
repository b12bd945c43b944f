package io.lastunit.common.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;

class CuratorsTest {

    @Test
    void newClient_passesTimeoutsExplicitly_andDoesNotStart() {
        try (CuratorFramework c = Curators.newClient("127.0.0.1:1", Duration.ofSeconds(2))) {
            assertThat(c.getZookeeperClient().getConnectionTimeoutMs()).isEqualTo(2000);
            assertThat(c.getState().name()).isEqualTo("LATENT");
            assertThat(c.getNamespace()).isEmpty();
        }
        try (CuratorFramework c = Curators.newClient("127.0.0.1:1", Duration.ofSeconds(30))) {
            assertThat(c.getZookeeperClient().getConnectionTimeoutMs())
                    .isEqualTo((int) Curators.CONNECTION_TIMEOUT.toMillis());
        }
    }

    @Test
    void newClient_refusesBadSettings() {
        assertThatThrownBy(() -> Curators.newClient(" ", Duration.ofSeconds(10)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("connectString");
        assertThatThrownBy(() -> Curators.newClient("h:1", Duration.ofMillis(5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sessionTimeout");
        assertThatThrownBy(() -> Curators.newClient("h:1", Duration.ofSeconds(5), Duration.ofSeconds(6), new RetryOneTime(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("connectionTimeout");
    }
}
