package io.lastunit.testkit.faults;

import java.util.concurrent.atomic.LongAdder;

/** What a {@link TcpProxy} has done, for tests and diagnostics; every count only grows. Thread-safe. */
final class ProxyCounters {
    final LongAdder accepted = new LongAdder();
    final LongAdder refused = new LongAdder();
    final LongAdder upstreamConnectFailures = new LongAdder();
    final LongAdder bytesToUpstream = new LongAdder();
    final LongAdder bytesToClient = new LongAdder();
}
