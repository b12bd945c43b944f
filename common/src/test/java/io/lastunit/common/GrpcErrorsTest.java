package io.lastunit.common;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

class GrpcErrorsTest {

    static com.google.rpc.Status rpcStatus(StatusRuntimeException e) {
        com.google.rpc.Status s = StatusProto.fromThrowable(e);
        assertThat(s).as("status carries a google.rpc.Status").isNotNull();
        return s;
    }

    static <T extends com.google.protobuf.Message> List<T> details(StatusRuntimeException e, Class<T> type) {
        return rpcStatus(e).getDetailsList().stream().filter(a -> a.is(type)).map(a -> {
            try {
                return a.unpack(type);
            } catch (InvalidProtocolBufferException ex) {
                throw new AssertionError(ex);
            }
        }).toList();
    }

    /** The fixed mapping of the API (inventory.proto, docs/errors.md), written out independently. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "INVALID_FIELD, INVALID_ARGUMENT",
        "TRANSFER_NOT_FOUND, NOT_FOUND",
        "ITEM_NOT_FOUND, NOT_FOUND",
        "HOLD_NOT_FOUND, NOT_FOUND",
        "ITEM_EXISTS, ALREADY_EXISTS",
        "IDEMPOTENCY_KEY_REUSED, ALREADY_EXISTS",
        "HOLD_NOT_HELD, FAILED_PRECONDITION",
        "HOLD_ALREADY_EXTENDED, FAILED_PRECONDITION",
        "ORDER_REF_MISMATCH, FAILED_PRECONDITION",
        "ITEM_NOT_ACTIVE, UNAVAILABLE",
        "UNAUTHENTICATED, UNAUTHENTICATED",
        "PERMISSION_DENIED, PERMISSION_DENIED",
        "RATE_LIMITED, RESOURCE_EXHAUSTED",
        "ITEM_BUSY, RESOURCE_EXHAUSTED",
        "QUEUE_FULL, RESOURCE_EXHAUSTED",
        "STORE_UNAVAILABLE, UNAVAILABLE",
        "STANDBY_MISSING, UNAVAILABLE",
        "TENANT_MOVING, UNAVAILABLE",
        "SHARD_UNAVAILABLE, UNAVAILABLE",
        "TOPOLOGY_UNAVAILABLE, UNAVAILABLE",
        "MOVED, ABORTED",
        "SHUTTING_DOWN, UNAVAILABLE",
        "FORWARDED, ABORTED",
        "NOT_LEADER, UNAVAILABLE",
        "BALANCER_UNAVAILABLE, UNAVAILABLE",
        "INVARIANT_BROKEN, INTERNAL",
        "INTERNAL_ERROR, INTERNAL",
        "SEATS_TAKEN, FAILED_PRECONDITION"})
    void reason_isBoundToDocumentedStatusCode(Reason reason, Status.Code code) {
        assertThat(reason.code()).isEqualTo(code);
        assertThat(GrpcErrors.toStatus(Failure.of(reason, "m")).getStatus().getCode()).isEqualTo(code);
    }

    @Test
    void reasonNamesAndDomain_areStableApi() {
        assertThat(Reason.values()).extracting(Reason::name).containsExactly(
                "INVALID_FIELD", "TRANSFER_NOT_FOUND", "ITEM_NOT_FOUND", "HOLD_NOT_FOUND", "ITEM_EXISTS", "IDEMPOTENCY_KEY_REUSED",
                "HOLD_NOT_HELD", "HOLD_ALREADY_EXTENDED", "ORDER_REF_MISMATCH", "ITEM_NOT_ACTIVE", "UNAUTHENTICATED",
                "PERMISSION_DENIED", "RATE_LIMITED", "ITEM_BUSY", "QUEUE_FULL",
                "STORE_UNAVAILABLE", "STANDBY_MISSING", "TENANT_MOVING", "SHARD_UNAVAILABLE", "TOPOLOGY_UNAVAILABLE", "MOVED", "SHUTTING_DOWN", "FORWARDED", "NOT_LEADER", "BALANCER_UNAVAILABLE",
                "TENANT_NOT_IMPORTABLE", "MOVE_SUPERSEDED", "UNKNOWN_CELL", "UNKNOWN_TENANT", "TENANT_ALREADY_IN_CELL", "CELL_LACKS_REGIONS",
                "MOVE_RUNNING", "UNKNOWN_MOVE", "MOVE_PAST_COMMIT_POINT", "INVARIANT_BROKEN",
                "INTERNAL_ERROR", "SEATS_TAKEN");
        assertThat(Reason.DOMAIN).isEqualTo("lastunit.io");
    }

    @ParameterizedTest
    @EnumSource(Reason.class)
    void failure_mapsToStatusOfItsReason_withErrorInfo(Reason reason) {
        Failure f = Failure.of(reason, "what was asked and found", Map.of("state", "SOLD", "k", "v"));

        StatusRuntimeException e = GrpcErrors.toStatus(f);

        assertThat(e.getStatus().getCode()).isEqualTo(reason.code());
        assertThat(e.getStatus().getDescription()).isEqualTo("what was asked and found");
        com.google.rpc.Status s = rpcStatus(e);
        assertThat(s.getCode()).isEqualTo(reason.code().value());
        assertThat(s.getMessage()).isEqualTo("what was asked and found");
        assertThat(s.getDetailsCount()).isEqualTo(1);
        ErrorInfo info = details(e, ErrorInfo.class).get(0);
        assertThat(info.getDomain()).isEqualTo("lastunit.io");
        assertThat(info.getReason()).isEqualTo(reason.name());
        assertThat(info.getMetadataMap()).isEqualTo(Map.of("state", "SOLD", "k", "v"));
    }

    @ParameterizedTest
    @EnumSource(Reason.class)
    void failureWithoutMetadata_carriesOnlyErrorInfoWithEmptyMetadata(Reason reason) {
        StatusRuntimeException e = GrpcErrors.toStatus(Failure.of(reason, "m"));

        assertThat(rpcStatus(e).getDetailsCount()).isEqualTo(1);
        assertThat(details(e, ErrorInfo.class)).singleElement()
                .isEqualTo(ErrorInfo.newBuilder().setReason(reason.name()).setDomain("lastunit.io").build());
        assertThat(details(e, BadRequest.class)).isEmpty();
        assertThat(details(e, RetryInfo.class)).isEmpty();
    }

    @Test
    void invalidField_carriesErrorInfoAndBadRequestFieldViolation() {
        Failure f = Failure.invalid("quantity", "is 0, must be within [1, 100]");

        StatusRuntimeException e = GrpcErrors.toStatus(f);

        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(e.getStatus().getDescription()).isEqualTo("quantity: is 0, must be within [1, 100]");
        assertThat(rpcStatus(e).getDetailsCount()).isEqualTo(2);
        ErrorInfo info = details(e, ErrorInfo.class).get(0);
        assertThat(info.getReason()).isEqualTo("INVALID_FIELD");
        assertThat(info.getDomain()).isEqualTo("lastunit.io");
        assertThat(info.getMetadataMap()).isEqualTo(Map.of("field", "quantity"));
        BadRequest bad = details(e, BadRequest.class).get(0);
        assertThat(bad.getFieldViolationsList()).singleElement().isEqualTo(BadRequest.FieldViolation.newBuilder()
                .setField("quantity")
                .setDescription("quantity: is 0, must be within [1, 100]")
                .build());
        assertThat(details(e, RetryInfo.class)).isEmpty();
    }

    @CsvSource({
        "1500, 1, 500000000",
        "250, 0, 250000000",
        "3000, 3, 0",
        "1, 0, 1000000",
        "0, 0, 0",
        "86400123, 86400, 123000000"})
    @ParameterizedTest(name = "{0} ms -> {1} s + {2} ns")
    void retryableFailure_carriesRetryInfoWithTheDelay(long millis, long seconds, int nanos) {
        Failure f = Failure.retryable(Reason.QUEUE_FULL, "lane queue is full", Duration.ofMillis(millis));

        StatusRuntimeException e = GrpcErrors.toStatus(f);

        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(rpcStatus(e).getDetailsCount()).isEqualTo(2);
        assertThat(details(e, ErrorInfo.class).get(0).getReason()).isEqualTo("QUEUE_FULL");
        RetryInfo retry = details(e, RetryInfo.class).get(0);
        assertThat(retry.getRetryDelay().getSeconds()).isEqualTo(seconds);
        assertThat(retry.getRetryDelay().getNanos()).isEqualTo(nanos);
        assertThat(details(e, BadRequest.class)).isEmpty();
    }

    @Test
    void retryableStoreUnavailable_mapsToUnavailableWithRetryInfo() {
        StatusRuntimeException e = GrpcErrors.toStatus(
                Failure.retryable(Reason.STORE_UNAVAILABLE, "store unreachable", Duration.ofMillis(200)));

        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(details(e, RetryInfo.class)).singleElement().isEqualTo(RetryInfo.newBuilder()
                .setRetryDelay(com.google.protobuf.Duration.newBuilder().setNanos(200_000_000))
                .build());
    }

    @Test
    void errorInfo_readsBackWhatToStatusPut() {
        StatusRuntimeException e = GrpcErrors.toStatus(
                Failure.of(Reason.HOLD_NOT_HELD, "hold is SOLD", Map.of("state", "SOLD")));

        Optional<ErrorInfo> info = GrpcErrors.errorInfo(e);

        assertThat(info).contains(ErrorInfo.newBuilder()
                .setReason("HOLD_NOT_HELD")
                .setDomain("lastunit.io")
                .putMetadata("state", "SOLD")
                .build());
    }

    @Test
    void errorInfo_findsErrorInfoOfInvalidField() {
        StatusRuntimeException e = GrpcErrors.toStatus(Failure.invalid("region", "unknown"));

        assertThat(GrpcErrors.errorInfo(e)).map(ErrorInfo::getMetadataMap).contains(Map.of("field", "region"));
    }

    @Test
    void errorInfo_ofStatusFoundInCauseChain() {
        StatusRuntimeException e = GrpcErrors.toStatus(Failure.of(Reason.ITEM_NOT_FOUND, "no such item"));

        assertThat(GrpcErrors.errorInfo(new RuntimeException("wrapped", e)))
                .map(ErrorInfo::getReason).contains("ITEM_NOT_FOUND");
    }

    @Test
    void errorInfo_isEmptyForStatusWithoutDetails() {
        assertThat(GrpcErrors.errorInfo(Status.NOT_FOUND.asRuntimeException())).isEmpty();
    }

    @Test
    void errorInfo_isEmptyWhenDetailsHoldNoErrorInfo() {
        StatusRuntimeException e = StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
                .setCode(Status.Code.INVALID_ARGUMENT.value())
                .addDetails(Any.pack(BadRequest.getDefaultInstance()))
                .build());

        assertThat(GrpcErrors.errorInfo(e)).isEmpty();
    }

    @Test
    void errorInfo_isEmptyForNonStatusThrowable() {
        assertThat(GrpcErrors.errorInfo(new IllegalStateException("boom"))).isEmpty();
    }

    @Test
    void completionExceptionWrappingFailure_mapsLikeTheFailure() {
        Failure f = Failure.invalid("hold_id", "is required");

        StatusRuntimeException direct = GrpcErrors.toStatus(f);
        StatusRuntimeException wrapped = GrpcErrors.toStatus((Throwable) new CompletionException(f));

        assertThat(wrapped.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(wrapped.getStatus().getDescription()).isEqualTo("hold_id: is required");
        assertThat(rpcStatus(wrapped)).isEqualTo(rpcStatus(direct));
    }

    @Test
    void nestedCompletionAndExecutionExceptions_areUnwrappedToTheFailure() {
        Failure f = Failure.retryable(Reason.SHUTTING_DOWN, "node stopping", Duration.ofSeconds(1));
        Throwable nested = new CompletionException(new ExecutionException(new CompletionException(f)));

        StatusRuntimeException e = GrpcErrors.toStatus(nested);

        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(rpcStatus(e)).isEqualTo(rpcStatus(GrpcErrors.toStatus(f)));
    }

    @Test
    void failureAsThrowable_mapsLikeTheFailure() {
        Failure f = Failure.of(Reason.ITEM_EXISTS, "exists with total=5");

        StatusRuntimeException e = GrpcErrors.toStatus((Throwable) f);

        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
        assertThat(GrpcErrors.errorInfo(e)).map(ErrorInfo::getReason).contains("ITEM_EXISTS");
    }

    static final String INTERNAL_MESSAGE = "unexpected server error \\(error_id=([0-9a-f]{16})\\); its detail is "
            + "logged under this id";

    /** The error id of an INTERNAL_ERROR status, checked against its message. */
    static String internalErrorId(StatusRuntimeException e) {
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
        ErrorInfo info = GrpcErrors.errorInfo(e).orElseThrow(() -> new AssertionError("no ErrorInfo in " + e));
        assertThat(info.getReason()).isEqualTo("INTERNAL_ERROR");
        assertThat(info.getDomain()).isEqualTo("lastunit.io");
        String id = info.getMetadataOrThrow("error_id");
        assertThat(e.getStatus().getDescription()).matches(INTERNAL_MESSAGE)
                .isEqualTo("unexpected server error (error_id=" + id + "); its detail is logged under this id");
        assertThat(rpcStatus(e).getMessage()).isEqualTo(e.getStatus().getDescription());
        assertThat(rpcStatus(e).getDetailsCount()).isEqualTo(1);
        return id;
    }

    @Test
    void arbitraryException_mapsToInternalError_withAnErrorId_andNoneOfItsText() {
        IllegalStateException boom = new IllegalStateException("boom: bucket acme/sku-1#0 key=order-4711-secret");

        StatusRuntimeException e;
        List<ch.qos.logback.classic.spi.ILoggingEvent> logged;
        try (LogCapture logs = new LogCapture(ErrorIds.class)) {
            e = GrpcErrors.toStatus(boom);
            logged = logs.events();
        }

        String id = internalErrorId(e);
        assertThat(String.valueOf(rpcStatus(e))).doesNotContain("boom", "order-4711-secret", "IllegalStateException");
        assertThat(e.getStatus().getCause()).as("kept for callers in this process").isSameAs(boom);
        assertThat(logged).singleElement().satisfies(line -> {
            assertThat(line.getLevel()).isEqualTo(ch.qos.logback.classic.Level.ERROR);
            assertThat(line.getFormattedMessage()).isEqualTo("error_id=" + id
                    + " unexpected failure: java.lang.IllegalStateException: boom: bucket acme/sku-1#0 key=order-4711-secret");
            assertThat(((ch.qos.logback.classic.spi.ThrowableProxy) line.getThrowableProxy()).getThrowable())
                    .isSameAs(boom);
        });
    }

    @Test
    void postgresTextInAnUnexpectedException_neverReachesTheClient() {
        java.sql.SQLException pg = new java.sql.SQLException("ERROR: null value in column \"buyer_id\" of relation "
                + "\"holds\" violates not-null constraint\n  Detail: Failing row contains (acme, sku-1, 7, null).", "23502");
        RuntimeException wrapped = new RuntimeException("batch failed: " + pg.getMessage(), pg);

        StatusRuntimeException e;
        List<ch.qos.logback.classic.spi.ILoggingEvent> logged;
        try (LogCapture logs = new LogCapture(ErrorIds.class)) {
            e = GrpcErrors.toStatus(new CompletionException(wrapped));
            logged = logs.events();
        }

        String id = internalErrorId(e);
        assertThat(String.valueOf(rpcStatus(e))).doesNotContain("buyer_id", "holds", "Failing row", "23502", "null value");
        assertThat(logged).singleElement().satisfies(line -> {
            assertThat(line.getFormattedMessage()).startsWith("error_id=" + id + " unexpected failure: ")
                    .contains("Failing row contains (acme, sku-1, 7, null)");
            assertThat(((ch.qos.logback.classic.spi.ThrowableProxy) line.getThrowableProxy()).getThrowable())
                    .isSameAs(wrapped);
        });
    }

    @Test
    void theSameUnexpectedException_mappedTwice_keepsItsId_andIsLoggedOnce() {
        IllegalStateException boom = new IllegalStateException("boom");

        StatusRuntimeException first;
        StatusRuntimeException second;
        List<ch.qos.logback.classic.spi.ILoggingEvent> logged;
        try (LogCapture logs = new LogCapture(ErrorIds.class)) {
            first = GrpcErrors.toStatus(boom);
            second = GrpcErrors.toStatus(new CompletionException(boom));
            logged = logs.events();
        }

        assertThat(internalErrorId(second)).isEqualTo(internalErrorId(first));
        assertThat(logged).hasSize(1);
    }

    @Test
    void twoUnexpectedExceptions_getTwoIds() {
        try (LogCapture logs = new LogCapture(ErrorIds.class)) {
            String a = internalErrorId(GrpcErrors.toStatus(new IllegalStateException("a")));
            String b = internalErrorId(GrpcErrors.toStatus(new IllegalStateException("a")));

            assertThat(a).isNotEqualTo(b);
            assertThat(logs.events()).hasSize(2);
        }
    }

    @Test
    void completionExceptionWrappingArbitraryException_mapsToInternalWithTheCause() {
        NullPointerException npe = new NullPointerException();

        StatusRuntimeException e = GrpcErrors.toStatus(new CompletionException(npe));

        internalErrorId(e);
        assertThat(e.getStatus().getCause()).isSameAs(npe);
    }

    @Test
    void completionExceptionWithoutCause_mapsToInternal() {
        CompletionException ce = new CompletionException("no cause", null);

        StatusRuntimeException e = GrpcErrors.toStatus(ce);

        internalErrorId(e);
        assertThat(e.getStatus().getCause()).isSameAs(ce);
    }

    @Test
    void checkedStatusException_passesThroughAsItsStatus_notAsAnInternalError() {
        StatusRuntimeException notFound = GrpcErrors.toStatus(Failure.of(Reason.ITEM_NOT_FOUND, "no such item"));
        io.grpc.StatusException checked = notFound.getStatus().asException(notFound.getTrailers());

        StatusRuntimeException e = GrpcErrors.toStatus(new CompletionException(checked));

        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
        assertThat(e.getStatus().getDescription()).isEqualTo("no such item");
        assertThat(GrpcErrors.errorInfo(e).map(ErrorInfo::getReason)).contains("ITEM_NOT_FOUND");
    }

    @Test
    void statusRuntimeException_passesThroughUnchanged() {
        StatusRuntimeException original = Status.DEADLINE_EXCEEDED.withDescription("late").asRuntimeException();

        assertThat(GrpcErrors.toStatus(original)).isSameAs(original);
        assertThat(GrpcErrors.toStatus(new CompletionException(original))).isSameAs(original);
    }
}
