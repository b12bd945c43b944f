package io.lastunit.shard.wiring;

import io.lastunit.shard.ShardConfig;
import io.lastunit.shard.ShardNode;
import io.lastunit.shard.store.EmbeddedDatabase;
import io.micronaut.context.annotation.Bean;
import io.micronaut.context.annotation.Factory;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.SQLException;
import java.time.InstantSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires a shard node from configuration. The one place that knows Micronaut; the node and
 * everything in it are plain Java. With no JDBC URL configured, the node gets an embedded
 * PostgreSQL of its own (and says so), so it runs on a machine with nothing installed.
 */
@Factory
public class ShardFactory {
    private static final Logger log = LoggerFactory.getLogger(ShardFactory.class);

    @Singleton
    ShardConfig shardConfig(ShardProperties properties) {
        return properties.toConfig();
    }

    @Singleton
    @Bean(preDestroy = "close")
    ShardNode shardNode(ShardConfig config) {
        if (!config.jdbc().url().isBlank()) {
            return new ShardNode(config, InstantSource.system(), null);
        }
        log.warn("no lastunit.shard.jdbc-url configured: starting an embedded PostgreSQL (its data is lost on exit)");
        try {
            EmbeddedDatabase db = EmbeddedDatabase.start(EmbeddedDatabase.Durability.FSYNC, line -> log.warn("{}", line));
            EmbeddedDatabase.Target t = db.createDatabase("lastunit_" + config.shardId().replaceAll("[^A-Za-z0-9]", "_"));
            ShardConfig embedded = config.withJdbc(new ShardConfig.Jdbc(t.url(), t.user(), t.password(),
                    config.jdbc().poolSize()));
            return new ShardNode(embedded, InstantSource.system(), db);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded PostgreSQL", e);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create the shard database in the embedded PostgreSQL", e);
        }
    }
}
