package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.common.ErrorIds;
import io.lastunit.common.GrpcErrors;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * A real shard node whose PostgreSQL fails a read (its {@code items} table renamed away under it):
 * the client over gRPC is told what failed and an error id, never PostgreSQL's text, and the log
 * has that text under the same id.
 */
class StoreFailureIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    static void execute(String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(PG.jdbcUrl(), PG.user(), PG.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    @Test
    void getStock_whenPostgresFailsTheRead_answersStoreUnavailable_withAnErrorIdAndNoPostgresText() throws Exception {
        Logger logger = (Logger) LoggerFactory.getLogger(ErrorIds.class);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            shard.createItem("acme", "sku-1", 5);
            StatusRuntimeException e;
            execute("ALTER TABLE items RENAME TO items_away");
            logs.start();
            logger.addAppender(logs);
            try {
                e = catchThrowableOfType(StatusRuntimeException.class, () -> shard.blocking()
                        .getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId("sku-1").build()));
            } finally {
                logger.detachAppender(logs);
                execute("ALTER TABLE items_away RENAME TO items");
            }

            assertThat(e).isNotNull();
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            ErrorInfo info = GrpcErrors.errorInfo(e).orElseThrow();
            assertThat(info.getReason()).isEqualTo("STORE_UNAVAILABLE");
            String id = info.getMetadataOrThrow("error_id");
            assertThat(id).matches("[0-9a-f]{16}");
            assertThat(e.getStatus().getDescription()).isEqualTo("GetStock read failed (error_id=" + id + ")");
            assertThat(GrpcErrors.retryAfterMs(e)).isPositive();
            assertThat(String.valueOf(StatusProto.fromThrowable(e)))
                    .doesNotContain("relation", "items", "42P01", "ERROR:", "SELECT");
            List<ILoggingEvent> lines = List.copyOf(logs.list);
            assertThat(lines).singleElement().satisfies(line -> {
                assertThat(line.getLevel()).isEqualTo(Level.ERROR);
                assertThat(line.getFormattedMessage())
                        .startsWith("error_id=" + id + " GetStock read failed: SQLState 42P01: ")
                        .contains("relation \"items\" does not exist");
                assertThat(line.getThrowableProxy()).as("the stack is logged").isNotNull();
            });
            // The shard reads again once PostgreSQL does.
            assertThat(shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId("sku-1")
                    .build()).getStock().getAvailable()).isEqualTo(5);
        }
    }
}
