package io.lastunit.common;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxy;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Failure.storeUnavailable and the ids behind it: what the client reads, and what the log keeps. */
class ErrorIdsTest {
    /** PostgreSQL's own words for a unique violation, with a key value a client must not read. */
    static final String PG_TEXT = "ERROR: duplicate key value violates unique constraint \"holds_tenant_key\"\n"
            + "  Detail: Key (tenant_id, idempotency_key)=(acme, order-4711-secret) already exists.";

    final LogCapture logs = new LogCapture(ErrorIds.class);

    @AfterEach
    void closeLogs() {
        logs.close();
    }

    static String errorId(StatusRuntimeException e) {
        return GrpcErrors.errorInfo(e).map(ErrorInfo::getMetadataMap).orElseThrow().get("error_id");
    }

    @Test
    void next_is16LowerCaseHexDigits_andNew() {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            String id = ErrorIds.next();
            assertThat(id).matches("[0-9a-f]{16}");
            ids.add(id);
        }
        assertThat(ids).hasSize(1_000);
    }

    @Test
    void storeUnavailable_tellsTheClientWhatFailedAndTheId_neverPostgresText() {
        SQLException pg = new SQLException(PG_TEXT, "23505");

        StatusRuntimeException e = GrpcErrors.toStatus(
                Failure.storeUnavailable("CreateItem failed", pg, Duration.ofMillis(50)));

        String id = errorId(e);
        assertThat(id).matches("[0-9a-f]{16}");
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(e.getStatus().getDescription()).isEqualTo("CreateItem failed (error_id=" + id + ")");
        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getReason()).isEqualTo("STORE_UNAVAILABLE");
        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap()).containsOnlyKeys("error_id");
        assertThat(GrpcErrors.retryAfterMs(e)).isEqualTo(50);
        String everythingSent = String.valueOf(io.grpc.protobuf.StatusProto.fromThrowable(e));
        assertThat(everythingSent).doesNotContain("duplicate", "holds_tenant_key", "order-4711-secret", "23505");
    }

    @Test
    void storeUnavailable_logsTheIdSqlStateAndPostgresMessage_atErrorWithTheStack() {
        SQLException pg = new SQLException(PG_TEXT, "23505");

        Failure f = Failure.storeUnavailable("CreateItem failed", pg, Duration.ofMillis(50));

        String id = f.metadata().get("error_id");
        List<ILoggingEvent> events = logs.events();
        assertThat(events).hasSize(1);
        ILoggingEvent line = events.get(0);
        assertThat(line.getLevel()).isEqualTo(Level.ERROR);
        assertThat(line.getFormattedMessage()).isEqualTo("error_id=" + id + " CreateItem failed: SQLState 23505: " + PG_TEXT);
        assertThat(((ThrowableProxy) line.getThrowableProxy()).getThrowable()).isSameAs(pg);
    }

    @Test
    void storeUnavailable_ofOneItemsOperation_carriesTheTenantAndItemAsKeyValues() {
        SQLException pg = new SQLException(PG_TEXT, "23505");

        Failure f = Failure.storeUnavailable("CreateItem failed", pg, Duration.ofMillis(50), "acme", "tee");

        ILoggingEvent line = logs.events().get(0);
        assertThat(line.getFormattedMessage()).startsWith("error_id=" + f.metadata().get("error_id") + " CreateItem");
        assertThat(line.getKeyValuePairs()).extracting(kv -> kv.key + "=" + kv.value)
                .containsExactly("tenant=acme", "item=tee");
        assertThat(((ThrowableProxy) line.getThrowableProxy()).getThrowable()).isSameAs(pg);
        assertThat(f.getMessage()).as("the client's text names neither").doesNotContain("acme", "tee");
    }

    @Test
    void storeUnavailable_logsTheExceptionsChainedToABatch() {
        BatchUpdateException batch = new BatchUpdateException("Batch entry 0 INSERT INTO holds ... was aborted", "40001",
                new int[0]);
        batch.setNextException(new SQLException("ERROR: could not serialize access due to concurrent update", "40001"));

        Failure f = Failure.storeUnavailable("lane 0 batch outcome unknown", batch, Duration.ofMillis(50));

        assertThat(f.getMessage()).doesNotContain("serialize", "INSERT");
        assertThat(logs.events()).singleElement().satisfies(line -> assertThat(line.getFormattedMessage()).endsWith(
                "SQLState 40001: Batch entry 0 INSERT INTO holds ... was aborted; next: SQLState 40001: "
                        + "ERROR: could not serialize access due to concurrent update"));
    }

    @Test
    void oneException_failingSeveralOperations_keepsOneId_andIsLoggedOnce() {
        SQLException pg = new SQLException(PG_TEXT, "23505");

        Failure first = Failure.storeUnavailable("Reserve outcome unknown", pg, Duration.ofMillis(50));
        Failure second = Failure.storeUnavailable("Reserve outcome unknown", pg, Duration.ofMillis(50));
        StatusRuntimeException internal = GrpcErrors.toStatus(pg);

        assertThat(second.metadata()).isEqualTo(first.metadata());
        assertThat(errorId(GrpcErrors.toStatus(second))).isEqualTo(first.metadata().get("error_id"));
        assertThat(errorId(internal)).isEqualTo(first.metadata().get("error_id"));
        assertThat(logs.events()).hasSize(1);
    }

    @Test
    void twoExceptions_getTwoIds_andTwoLines() {
        Failure a = Failure.storeUnavailable("GetStock read failed", new SQLException("a", "08006"), Duration.ZERO);
        Failure b = Failure.storeUnavailable("GetStock read failed", new SQLException("b", "08006"), Duration.ZERO);

        assertThat(a.metadata().get("error_id")).isNotEqualTo(b.metadata().get("error_id"));
        assertThat(logs.events()).extracting(ILoggingEvent::getFormattedMessage).containsExactly(
                "error_id=" + a.metadata().get("error_id") + " GetStock read failed: SQLState 08006: a",
                "error_id=" + b.metadata().get("error_id") + " GetStock read failed: SQLState 08006: b");
    }

    @Test
    void logged_tellsTheClientWhatAndTheId_andLogsTheCauseOnce_underThatId() {
        IllegalStateException broken = new IllegalStateException(
                "bucket other-tenant/secret-item#0 out of balance: allotment=10, available=-1, held=11, sold=0");

        Failure f = Failure.logged(Reason.INVARIANT_BROKEN, "lane 2: batch refused", broken, null);
        Failure again = Failure.logged(Reason.INVARIANT_BROKEN, "lane 2: batch refused", broken, null);
        StatusRuntimeException e = GrpcErrors.toStatus(f);

        String id = errorId(e);
        assertThat(again.metadata()).containsEntry("error_id", id);
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(e.getStatus().getDescription()).isEqualTo("lane 2: batch refused (error_id=" + id + ")");
        assertThat(String.valueOf(io.grpc.protobuf.StatusProto.fromThrowable(e))).doesNotContain("other-tenant",
                "secret-item");
        List<ILoggingEvent> events = logs.events();
        assertThat(events).hasSize(1);
        assertThat(events.get(0).getLevel()).isEqualTo(Level.ERROR);
        assertThat(events.get(0).getFormattedMessage()).startsWith("error_id=" + id + " lane 2: batch refused: ")
                .contains("other-tenant/secret-item");
    }
}
