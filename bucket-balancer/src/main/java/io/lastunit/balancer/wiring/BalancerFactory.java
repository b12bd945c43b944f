package io.lastunit.balancer.wiring;

import io.lastunit.balancer.BalancerConfig;
import io.lastunit.balancer.BalancerNode;
import io.micronaut.context.annotation.Bean;
import io.micronaut.context.annotation.Factory;
import jakarta.inject.Singleton;

/** Wires a balancer from configuration: the one place that knows Micronaut. */
@Factory
public class BalancerFactory {
    @Singleton
    BalancerConfig balancerConfig(BalancerProperties properties) {
        return properties.toConfig();
    }

    @Singleton
    @Bean(preDestroy = "close")
    BalancerNode balancerNode(BalancerConfig config) {
        return new BalancerNode(config);
    }
}
