package io.lastunit.router.wiring;

import io.lastunit.router.RouterConfig;
import io.lastunit.router.RouterNode;
import io.micronaut.context.annotation.Bean;
import io.micronaut.context.annotation.Factory;
import jakarta.inject.Singleton;

/** Wires a router from configuration: the one place that knows Micronaut. */
@Factory
public class RouterFactory {
    @Singleton
    RouterConfig routerConfig(RouterProperties properties) {
        return properties.toConfig();
    }

    @Singleton
    @Bean(preDestroy = "close")
    RouterNode routerNode(RouterConfig config) {
        return new RouterNode(config);
    }
}
