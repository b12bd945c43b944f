package io.lastunit.admin.demo;

import io.lastunit.api.inventory.v1.RowStates;
import java.util.ArrayList;
import java.util.List;

/**
 * Draws a seat map's compact form ({@code GetSeatMap(compact=true)}: one {@link RowStates} per
 * row) for a terminal, in plain ASCII within {@link #WIDTH_MAX} columns: the stage on top, then per
 * section a header with its counts and one line per row, one character per seat in row order —
 * {@value #SOLD} sold, {@value #HELD} held, {@value #FREE} free, {@value #KILLED} off sale, a space
 * for an aisle ({@code '?'} for a state it does not know). A row too long for the width is cut,
 * ending in {@code '>'}. Pure, thread-safe.
 */
public final class SeatMapDrawing {
    public static final char SOLD = '#';
    public static final char HELD = 'o';
    public static final char FREE = '.';
    public static final char KILLED = 'x';
    public static final char AISLE = ' ';
    public static final int WIDTH_MAX = 80;
    /** Every row line starts with this (after the indent). */
    public static final String ROW_LABEL = "row ";

    private SeatMapDrawing() {
    }

    /** The legend line. */
    public static String legend() {
        return "legend: '" + SOLD + "' sold  '" + HELD + "' held  '" + FREE + "' free  '" + KILLED
                + "' off sale  '" + AISLE + "' aisle";
    }

    /** One seat's (or the aisle's) character for a compact state character. */
    public static char glyph(char state) {
        return switch (state) {
            case 's' -> SOLD;
            case 'h' -> HELD;
            case '.' -> FREE;
            case 'x' -> KILLED;
            case '|' -> AISLE;
            default -> '?';
        };
    }

    /**
     * The lines of the drawing, each starting with {@code indent}: the stage, then for each section
     * (in the order the rows come) a header and one line per row.
     */
    public static List<String> draw(List<RowStates> rows, String indent) {
        int labelWidth = 1;
        int glyphWidth = 1;
        for (RowStates r : rows) {
            labelWidth = Math.max(labelWidth, r.getRowId().length());
            glyphWidth = Math.max(glyphWidth, r.getStates().length());
        }
        String label = indent + ROW_LABEL + "%-" + labelWidth + "s  ";
        int lead = String.format(label, "").length();
        int room = Math.max(1, WIDTH_MAX - lead);
        List<String> lines = new ArrayList<>();
        int stage = Math.min(glyphWidth, room);
        lines.add(cut(" ".repeat(lead) + center("STAGE", stage), WIDTH_MAX));
        String section = null;
        for (int i = 0; i < rows.size(); i++) {
            RowStates r = rows.get(i);
            if (!r.getSectionId().equals(section)) {
                section = r.getSectionId();
                long[] c = new long[4];
                for (int j = i; j < rows.size() && rows.get(j).getSectionId().equals(section); j++) {
                    count(rows.get(j).getStates(), c);
                }
                lines.add("");
                lines.add(cut(indent + "section " + section + String.format("   sold %,d  held %,d  free %,d%s",
                        c[0], c[1], c[2], c[3] == 0 ? "" : String.format("  off sale %,d", c[3])), WIDTH_MAX));
            }
            StringBuilder g = new StringBuilder(r.getStates().length());
            for (int k = 0; k < r.getStates().length(); k++) {
                g.append(glyph(r.getStates().charAt(k)));
            }
            String seats = g.length() > room ? g.substring(0, room - 1) + ">" : g.toString();
            lines.add(stripEnd(String.format(label, r.getRowId()) + seats));
        }
        return lines;
    }

    /** Sold, held, free and killed seats of one row's compact states, added to {@code c}. */
    static void count(String states, long[] c) {
        for (int k = 0; k < states.length(); k++) {
            switch (states.charAt(k)) {
                case 's' -> c[0]++;
                case 'h' -> c[1]++;
                case '.' -> c[2]++;
                case 'x' -> c[3]++;
                default -> {
                    // '|' is an aisle, not a seat
                }
            }
        }
    }

    private static String center(String word, int width) {
        if (width < word.length() + 2) {
            return word;
        }
        int left = (width - word.length() - 2) / 2;
        int right = width - word.length() - 2 - left;
        return "=".repeat(left) + " " + word + " " + "=".repeat(right);
    }

    private static String cut(String s, int width) {
        return s.length() <= width ? s : s.substring(0, width);
    }

    private static String stripEnd(String s) {
        int e = s.length();
        while (e > 0 && s.charAt(e - 1) == ' ') {
            e--;
        }
        return s.substring(0, e);
    }
}
