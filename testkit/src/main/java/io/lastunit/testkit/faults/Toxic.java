package io.lastunit.testkit.faults;

/** The kinds of fault a {@link TcpProxy} can apply to the traffic it forwards; each is set and cleared on its own. */
public enum Toxic {
    /** Every connection is reset and new ones are refused. */
    CUT,
    /** Connections stay open but no byte moves in either direction. */
    BLACKHOLE,
    /** Each forwarded chunk waits a fixed time (plus jitter) before it is written on. */
    LATENCY,
    /** Each connection's direction is limited to a number of bytes per second. */
    THROTTLE
}
