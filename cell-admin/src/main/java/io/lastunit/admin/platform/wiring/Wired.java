package io.lastunit.admin.platform.wiring;

import io.micronaut.context.ApplicationContext;
import java.util.Map;

/**
 * One service of a local platform wired by Micronaut from properties, as its {@code *Main}
 * would wire it: the platform asks for its beans and closes it. The only place in the admin
 * tool that sees Micronaut.
 */
public final class Wired implements AutoCloseable {
    private final ApplicationContext context;

    private Wired(ApplicationContext context) {
        this.context = context;
    }

    /** Starts a context with these properties (they override the service's defaults). */
    public static Wired run(Map<String, Object> properties) {
        return new Wired(ApplicationContext.run(properties));
    }

    public <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    @Override
    public void close() {
        context.close();
    }
}
