package io.lastunit.testkit.faults;

import java.time.Duration;
import java.util.Objects;

/**
 * Nemeses that set one toxic on a {@link TcpProxy} and clear only that toxic when they stop, so a
 * latency nemesis and a cut nemesis on the same proxy heal independently. The parameters are
 * checked when the nemesis is made, not when it starts mid-test.
 *
 * <p>Owns nothing beyond the nemeses it makes; they are thread-safe ({@link Nemesis#of}).
 */
public final class ProxyNemesis {
    private ProxyNemesis() {
    }

    /** Resets every connection and refuses new ones ({@link TcpProxy#cut()}) until stopped. */
    public static Nemesis cut(TcpProxy proxy) {
        Objects.requireNonNull(proxy, "proxy");
        return Nemesis.of("cut " + proxy.name(), proxy::cut, () -> proxy.clear(Toxic.CUT));
    }

    /** Stalls every byte ({@link TcpProxy#blackhole()}) until stopped. */
    public static Nemesis blackhole(TcpProxy proxy) {
        Objects.requireNonNull(proxy, "proxy");
        return Nemesis.of("blackhole " + proxy.name(), proxy::blackhole, () -> proxy.clear(Toxic.BLACKHOLE));
    }

    /**
     * Delays every chunk by {@code perChunk} plus up to {@code jitter}
     * ({@link TcpProxy#latency(Duration, Duration)}).
     */
    public static Nemesis latency(TcpProxy proxy, Duration perChunk, Duration jitter) {
        Objects.requireNonNull(proxy, "proxy");
        TcpProxy.checkedLatency("latency", perChunk);
        TcpProxy.checkedLatency("jitter", jitter);
        return Nemesis.of("latency " + proxy.name() + " " + perChunk + "+" + jitter,
                () -> proxy.latency(perChunk, jitter), () -> proxy.clear(Toxic.LATENCY));
    }

    /** Limits each direction of each connection to {@code bytesPerSecond} ({@link TcpProxy#throttle}). */
    public static Nemesis throttle(TcpProxy proxy, long bytesPerSecond) {
        Objects.requireNonNull(proxy, "proxy");
        TcpProxy.checkThrottle(bytesPerSecond);
        return Nemesis.of("throttle " + proxy.name() + " " + bytesPerSecond + " B/s",
                () -> proxy.throttle(bytesPerSecond), () -> proxy.clear(Toxic.THROTTLE));
    }
}
