package io.lastunit.bench.load;

import java.io.PrintStream;
import java.util.Locale;

/**
 * The progress line of a run: a bar of buyers answered, then the counts so far. {@link Mode#BAR}
 * redraws it in place (a terminal), {@link Mode#LINES} prints a line now and then (a log file).
 * {@link #line} is pure; {@link #print} is called from one timer thread, then once at the end.
 */
final class Progress {
    /** How progress is shown. */
    enum Mode {
        BAR, LINES, NONE;

        /** {@code auto}: a bar when the launcher says stderr is a terminal, or when there is a console. */
        static Mode auto() {
            String p = System.getProperty("lastunit.progress", "");
            for (Mode m : values()) {
                if (m.name().equalsIgnoreCase(p.trim())) {
                    return m;
                }
            }
            return System.console() != null ? BAR : LINES;
        }

        long periodMillis() {
            return this == BAR ? 200 : 1_000;
        }
    }

    /** What the line shows. */
    record Snapshot(long done, long buyers, long reserved, long units, long soldOut, long limited, long errors,
            long inFlight, long calls, double seconds) {
    }

    static final int WIDTH = 30;

    private final Mode mode;
    private final PrintStream out;
    private int lastLength;

    Progress(Mode mode, PrintStream out) {
        this.mode = mode;
        this.out = out;
    }

    Mode mode() {
        return mode;
    }

    static String line(Snapshot s) {
        int filled = s.buyers() <= 0 ? WIDTH : (int) Math.min(WIDTH, WIDTH * s.done() / s.buyers());
        double rate = s.seconds() <= 0 ? 0 : s.calls() / s.seconds();
        return String.format(Locale.ROOT,
                "[%s%s] %,d/%,d buyers %5.1f s  reserved %,d/%,d  sold out %,d  limited %,d  errors %,d  "
                        + "in flight %,d  %,.0f req/s",
                "#".repeat(filled), ".".repeat(WIDTH - filled), s.done(), s.buyers(), s.seconds(), s.reserved(),
                s.units(), s.soldOut(), s.limited(), s.errors(), s.inFlight(), rate);
    }

    synchronized void print(Snapshot s, boolean last) {
        switch (mode) {
            case NONE -> {
            }
            case LINES -> out.println(line(s));
            case BAR -> {
                String l = line(s);
                String pad = " ".repeat(Math.max(0, lastLength - l.length()));
                lastLength = l.length();
                out.print("\r" + l + pad);
                if (last) {
                    out.println();
                }
            }
        }
        out.flush();
    }
}
