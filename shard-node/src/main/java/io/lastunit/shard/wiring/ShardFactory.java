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
 * everything in it are plain Java. With {@code embedded=true} (and no JDBC URL, which
 * {@link ShardProperties#toConfig()} checks), the node gets an embedded PostgreSQL of its own and
 * says so; it closes it when it stops.
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
    ShardNode shardNode(ShardConfig config, ShardProperties properties) {
        if (!properties.isEmbedded()) {
            return new ShardNode(config, InstantSource.system(), null);
        }
        log.warn("lastunit.shard.embedded=true: starting an embedded PostgreSQL (fsync on) in a temporary directory,"
                + " deleted when the node stops: its data is lost then");
        EmbeddedDatabase db = null;
        try {
            db = EmbeddedDatabase.start(EmbeddedDatabase.Durability.FSYNC, line -> log.warn("{}", line));
            EmbeddedDatabase.Target t = db.createDatabase("lastunit_" + config.shardId().replaceAll("[^A-Za-z0-9]", "_"));
            ShardConfig embedded = config.withJdbc(new ShardConfig.Jdbc(t.url(), t.user(), t.password(),
                    config.jdbc().poolSize(), config.jdbc().timeouts()));
            return new ShardNode(embedded, InstantSource.system(), db);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded PostgreSQL: " + e.getMessage(), e);
        } catch (SQLException e) {
            closeQuietly(db, e);
            throw new IllegalStateException("could not create the shard database in the embedded PostgreSQL: "
                    + e.getMessage(), e);
        }
    }

    private static void closeQuietly(EmbeddedDatabase db, Exception cause) {
        try {
            db.close();
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }
}
