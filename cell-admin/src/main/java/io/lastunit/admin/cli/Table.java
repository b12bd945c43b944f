package io.lastunit.admin.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table for the terminal: a header, columns padded to their widest cell, numbers
 * right-aligned. Not thread-safe.
 */
public final class Table {
    private final List<String> header;
    private final boolean[] numeric;
    private final List<List<String>> rows = new ArrayList<>();

    /** Columns whose name starts with '#' are right-aligned; the '#' is not printed. */
    public Table(String... columns) {
        header = new ArrayList<>();
        numeric = new boolean[columns.length];
        for (int i = 0; i < columns.length; i++) {
            numeric[i] = columns[i].startsWith("#");
            header.add(numeric[i] ? columns[i].substring(1) : columns[i]);
        }
    }

    public Table row(Object... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException("a row of " + cells.length + " cells in a table of " + header.size());
        }
        List<String> row = new ArrayList<>(cells.length);
        for (Object c : cells) {
            row.add(c == null ? "" : String.valueOf(c));
        }
        rows.add(row);
        return this;
    }

    public int size() {
        return rows.size();
    }

    public List<String> lines() {
        int[] width = new int[header.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = header.get(i).length();
            for (List<String> r : rows) {
                width[i] = Math.max(width[i], r.get(i).length());
            }
        }
        List<String> out = new ArrayList<>();
        out.add(line(header, width));
        for (List<String> r : rows) {
            out.add(line(r, width));
        }
        return out;
    }

    public void print(PrintWriter out, String indent) {
        for (String l : lines()) {
            out.println(indent + l);
        }
    }

    private String line(List<String> cells, int[] width) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            String c = cells.get(i);
            boolean last = i == cells.size() - 1;
            String pad = " ".repeat(width[i] - c.length());
            if (numeric[i]) {
                sb.append(pad).append(c);
            } else {
                sb.append(c);
                if (!last) {
                    sb.append(pad);
                }
            }
            if (!last) {
                sb.append("  ");
            }
        }
        return sb.toString();
    }
}
