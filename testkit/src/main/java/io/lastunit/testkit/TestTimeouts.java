package io.lastunit.testkit;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.Objects;

/**
 * Scales test timeouts for slow machines: {@code scaled(d)} is {@code d} multiplied by the system
 * property {@value #PROPERTY} (default 1). The parent POM passes that property to failsafe; pass
 * {@code -Dlastunit.test.timeoutScale=3} to Maven to give every integration timeout three times
 * as long.
 *
 * <p>Owns nothing: no state, the property is read on every call, so it is thread-safe.
 *
 * <p>Hazard: a bad value (not a number, zero, negative) makes every call throw
 * {@link IllegalStateException} rather than silently falling back to 1, so a typo on the command
 * line fails the first test that waits instead of producing flaky timeouts. Use it for how long a
 * test waits for something, never to scale what the code under test is configured with, or a
 * larger scale changes the behaviour being tested.
 */
public final class TestTimeouts {

    /** The system property holding the scale factor. */
    public static final String PROPERTY = "lastunit.test.timeoutScale";

    private static final BigInteger NANOS_PER_SECOND = BigInteger.valueOf(1_000_000_000L);

    private TestTimeouts() {
    }

    /**
     * Returns {@code d} multiplied by the scale factor, rounded to the nanosecond.
     *
     * @throws IllegalStateException if {@value #PROPERTY} is set but is not a positive number
     * @throws ArithmeticException if the result does not fit in a {@link Duration}
     */
    public static Duration scaled(Duration d) {
        Objects.requireNonNull(d, "d");
        BigDecimal scale = scale();
        if (scale.compareTo(BigDecimal.ONE) == 0) {
            return d;
        }
        BigDecimal nanos = new BigDecimal(BigInteger.valueOf(d.getSeconds()).multiply(NANOS_PER_SECOND)
                        .add(BigInteger.valueOf(d.getNano())))
                .multiply(scale)
                .setScale(0, RoundingMode.HALF_UP);
        BigInteger[] secondsAndNanos = nanos.toBigIntegerExact().divideAndRemainder(NANOS_PER_SECOND);
        return Duration.ofSeconds(secondsAndNanos[0].longValueExact(), secondsAndNanos[1].longValue());
    }

    /** The current scale factor; 1 when the property is unset or blank. */
    static BigDecimal scale() {
        String raw = System.getProperty(PROPERTY);
        if (raw == null || raw.isBlank()) {
            return BigDecimal.ONE;
        }
        BigDecimal scale;
        try {
            scale = new BigDecimal(raw.trim());
        } catch (NumberFormatException e) {
            throw bad(raw);
        }
        if (scale.signum() <= 0) {
            throw bad(raw);
        }
        return scale;
    }

    private static IllegalStateException bad(String raw) {
        return new IllegalStateException("System property " + PROPERTY + "='" + raw
                + "' is not a positive number; use e.g. -D" + PROPERTY + "=2 or leave it unset (1)");
    }
}
