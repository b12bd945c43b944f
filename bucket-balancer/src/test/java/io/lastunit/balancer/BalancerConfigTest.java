package io.lastunit.balancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.balancer.wiring.BalancerProperties;
import io.micronaut.context.ApplicationContext;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BalancerConfigTest {
    @Test
    void defaults_areValid_andAsDocumented() {
        BalancerConfig c = BalancerConfig.defaults("127.0.0.1:2181");
        assertThat(c.host()).isEqualTo("127.0.0.1");
        assertThat(c.interval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.hysteresis()).isEqualTo(0.25);
        assertThat(c.minTransfer()).isEqualTo(16);
        assertThat(c.collapseFraction()).isEqualTo(0.02);
        assertThat(c.collapseMin()).isEqualTo(64);
        assertThat(c.invariantInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.invariantConsecutive()).isEqualTo(2);
        assertThat(c.stepAttemptsMax()).isEqualTo(3);
        assertThat(c.policy().collapseThreshold(10_000)).isEqualTo(200);
    }

    @Test
    void metricsSettings_defaultToOnAtTheBalancersHost_andBindFromTheirKeys() {
        BalancerProperties d = new BalancerProperties();
        d.setHost("10.0.0.8");
        assertThat(d.toConfig().metrics()).isEqualTo(new io.lastunit.common.metrics.MetricsConfig(true, "10.0.0.8", 0));
        try (ApplicationContext ctx = ApplicationContext.run(Map.of(
                "lastunit.balancer.metrics-enabled", false,
                "lastunit.balancer.metrics-host", "0.0.0.0",
                "lastunit.balancer.metrics-port", 9500))) {
            assertThat(ctx.getBean(BalancerConfig.class).metrics())
                    .isEqualTo(new io.lastunit.common.metrics.MetricsConfig(false, "0.0.0.0", 9500));
        }
    }

    @Test
    void badSettings_failStartUp_withEveryProblemInOneMessage() {
        assertThatThrownBy(() -> BalancerConfig.defaults("zk:2181").with(b -> {
            b.zookeeper = " ";
            b.port = 70_000;
            b.namespace = "lastunit";
            b.interval = Duration.ZERO;
            b.hysteresis = 1.5;
            b.minTransfer = 0;
            b.invariantConsecutive = 0;
            b.stepAttemptsMax = 0;
            b.advertisedAddress = "nohost";
            b.tlsCertificate = new java.io.File("/nonexistent.pem");
        })).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid balancer config: ")
                .hasMessageContaining("port=70000")
                .hasMessageContaining("zookeeper (connect string) is required")
                .hasMessageContaining("namespace must be an absolute znode path")
                .hasMessageContaining("interval=PT0S")
                .hasMessageContaining("hysteresis=1.5")
                .hasMessageContaining("minTransfer=0")
                .hasMessageContaining("invariantConsecutive=0")
                .hasMessageContaining("stepAttemptsMax=0")
                .hasMessageContaining("advertisedAddress")
                .hasMessageContaining("tlsCertificate and tlsKey go together");
    }

    @Test
    void zookeeperTls_filesGoTogether_namingTheMissingSettings() {
        try (ApplicationContext ctx = ApplicationContext.run(Map.of(
                "lastunit.balancer.zookeeper", "zk:2281",
                "lastunit.balancer.zookeeper-tls-certificate", "/etc/lastunit/zk-client.pem"))) {
            BalancerProperties p = ctx.getBean(BalancerProperties.class);
            assertThat(p.getZookeeperTlsCertificate()).isEqualTo("/etc/lastunit/zk-client.pem");
            assertThatThrownBy(p::toConfig).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("missing: lastunit.balancer.zookeeper-tls-key, lastunit.balancer.zookeeper-tls-ca");
        }
        BalancerProperties none = new BalancerProperties();
        none.setZookeeper("zk:2181");
        assertThat(none.toConfig().zookeeperTls()).isNull();
    }

    @Test
    void micronaut_bindsTheKebabCaseSettings() {
        try (ApplicationContext ctx = ApplicationContext.run(Map.of(
                "lastunit.balancer.zookeeper", "zk:2181",
                "lastunit.balancer.interval-ms", 250,
                "lastunit.balancer.hysteresis", 0.5,
                "lastunit.balancer.min-transfer", 8,
                "lastunit.balancer.collapse-fraction", 0.05,
                "lastunit.balancer.collapse-min", 10,
                "lastunit.balancer.invariant-interval-ms", 700,
                "lastunit.balancer.invariant-consecutive", 3,
                "lastunit.balancer.step-attempts-max", 5))) {
            BalancerConfig c = ctx.getBean(BalancerProperties.class).toConfig();
            assertThat(c.zookeeper()).isEqualTo("zk:2181");
            assertThat(c.interval()).isEqualTo(Duration.ofMillis(250));
            assertThat(c.hysteresis()).isEqualTo(0.5);
            assertThat(c.minTransfer()).isEqualTo(8);
            assertThat(c.collapseFraction()).isEqualTo(0.05);
            assertThat(c.collapseMin()).isEqualTo(10);
            assertThat(c.invariantInterval()).isEqualTo(Duration.ofMillis(700));
            assertThat(c.invariantConsecutive()).isEqualTo(3);
            assertThat(c.stepAttemptsMax()).isEqualTo(5);
            assertThat(c.port()).isEqualTo(7500);
            // The factory wires a node from the same settings (not started; the context closes it).
            assertThat(ctx.getBean(BalancerNode.class).config()).isEqualTo(ctx.getBean(BalancerConfig.class));
        }
    }
}
