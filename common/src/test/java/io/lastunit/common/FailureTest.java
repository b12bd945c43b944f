package io.lastunit.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FailureTest {

    @Test
    void invalid_namesFieldInMetadataAndMessage() {
        Failure f = Failure.invalid("quantity", "is 0");

        assertThat(f.reason()).isEqualTo(Reason.INVALID_FIELD);
        assertThat(f.getMessage()).isEqualTo("quantity: is 0");
        assertThat(f.metadata()).isEqualTo(Map.of("field", "quantity"));
        assertThat(f.retryAfter()).isNull();
    }

    @Test
    void of_keepsReasonMessageAndMetadata() {
        Failure f = Failure.of(Reason.HOLD_NOT_HELD, "hold is RELEASED", Map.of("state", "RELEASED"));

        assertThat(f.reason()).isEqualTo(Reason.HOLD_NOT_HELD);
        assertThat(f.getMessage()).isEqualTo("hold is RELEASED");
        assertThat(f.metadata()).isEqualTo(Map.of("state", "RELEASED"));
        assertThat(f.retryAfter()).isNull();
        assertThat(Failure.of(Reason.ITEM_NOT_FOUND, "x").metadata()).isEmpty();
    }

    @Test
    void retryable_keepsDelay() {
        Failure f = Failure.retryable(Reason.QUEUE_FULL, "busy", Duration.ofMillis(250));

        assertThat(f.reason()).isEqualTo(Reason.QUEUE_FULL);
        assertThat(f.retryAfter()).isEqualTo(Duration.ofMillis(250));
        assertThat(f.metadata()).isEmpty();
    }

    @Test
    void metadata_isACopyAndUnmodifiable() {
        Map<String, String> md = new HashMap<>(Map.of("state", "SOLD"));
        Failure f = Failure.of(Reason.HOLD_NOT_HELD, "m", md);

        md.put("state", "HELD");

        assertThat(f.metadata()).isEqualTo(Map.of("state", "SOLD"));
        assertThatThrownBy(() -> f.metadata().put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void hasNoStackTraceAndNoSuppression() {
        Failure f = Failure.of(Reason.ITEM_NOT_FOUND, "m");
        f.addSuppressed(new RuntimeException("ignored"));

        assertThat(f.getStackTrace()).isEmpty();
        assertThat(f.getSuppressed()).isEmpty();
        assertThat(f.getCause()).isNull();
    }
}
