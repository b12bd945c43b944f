package io.lastunit.testkit.faults;

import java.util.EnumSet;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * The toxics a {@link TcpProxy} applies now, read by its pumps before every chunk they forward,
 * so a change reaches existing connections as well as new ones.
 *
 * <p>Owns one immutable {@link Settings} value; thread-safe (the test thread changes it while the
 * pumps read it). Every change wakes the pumps waiting out a blackhole.
 *
 * <p>Hazard: {@link #awaitFlowing()} waits for as long as the blackhole lasts; a pump waiting there
 * ends only when the blackhole is cleared or its thread is interrupted (the connection's close does that).
 */
final class Toxics {

    /** One consistent set of toxics; {@code latencyNanos == 0} and {@code bytesPerSecond == 0} mean "none". */
    record Settings(boolean cut, boolean blackhole, long latencyNanos, long jitterNanos, long bytesPerSecond) {
        static final Settings NONE = new Settings(false, false, 0, 0, 0);

        Set<Toxic> active() {
            Set<Toxic> active = EnumSet.noneOf(Toxic.class);
            if (cut) {
                active.add(Toxic.CUT);
            }
            if (blackhole) {
                active.add(Toxic.BLACKHOLE);
            }
            if (latencyNanos > 0 || jitterNanos > 0) {
                active.add(Toxic.LATENCY);
            }
            if (bytesPerSecond > 0) {
                active.add(Toxic.THROTTLE);
            }
            return active;
        }

        Settings withCut() {
            return new Settings(true, blackhole, latencyNanos, jitterNanos, bytesPerSecond);
        }

        Settings withBlackhole() {
            return new Settings(cut, true, latencyNanos, jitterNanos, bytesPerSecond);
        }

        Settings withLatency(long latencyNanos, long jitterNanos) {
            return new Settings(cut, blackhole, latencyNanos, jitterNanos, bytesPerSecond);
        }

        Settings withThrottle(long bytesPerSecond) {
            return new Settings(cut, blackhole, latencyNanos, jitterNanos, bytesPerSecond);
        }

        Settings without(Toxic toxic) {
            return switch (toxic) {
                case CUT -> new Settings(false, blackhole, latencyNanos, jitterNanos, bytesPerSecond);
                case BLACKHOLE -> new Settings(cut, false, latencyNanos, jitterNanos, bytesPerSecond);
                case LATENCY -> new Settings(cut, blackhole, 0, 0, bytesPerSecond);
                case THROTTLE -> new Settings(cut, blackhole, latencyNanos, jitterNanos, 0);
            };
        }
    }

    private Settings current = Settings.NONE;

    synchronized Settings current() {
        return current;
    }

    synchronized void change(UnaryOperator<Settings> change) {
        current = change.apply(current);
        notifyAll();
    }

    /** Waits while the proxy is blackholed, then returns the settings that let bytes move. */
    synchronized Settings awaitFlowing() throws InterruptedException {
        while (current.blackhole()) {
            wait();
        }
        return current;
    }
}
