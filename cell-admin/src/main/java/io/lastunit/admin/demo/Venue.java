package io.lastunit.admin.demo;

import io.lastunit.api.inventory.v1.SeatMap;
import io.lastunit.api.inventory.v1.SeatRow;
import io.lastunit.api.inventory.v1.SeatSection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The venue {@code demo --seats} sells: sections {@code A, B, ...}, each of rows {@code 1..rows}
 * of numbered seats {@code 1..seatsPerRow} with ids {@code <section><row>-<n>} (e.g. {@code B12-7}),
 * an aisle after seat {@code aisleAfter} of every row (0 = none), rank = the row's number (row 1,
 * nearest the stage, is best). Knows where each seat is, so the buyers' holds can be checked
 * against the layout the demo created rather than against what the server says. Immutable; pure.
 */
public record Venue(int sections, int rows, int seatsPerRow, int aisleAfter) {
    public static final int SECTIONS_MAX = 26;
    public static final int ROWS_MAX = 99;
    /** So that a drawn row fits 80 columns. */
    public static final int SEATS_PER_ROW_MAX = 60;

    /** Where a seat is: section and row indexes from 0, seat number from 1. */
    public record Place(int section, int row, int number) {
    }

    public Venue {
        if (sections < 1 || sections > SECTIONS_MAX || rows < 1 || rows > ROWS_MAX || seatsPerRow < 1
                || seatsPerRow > SEATS_PER_ROW_MAX || aisleAfter < 0 || aisleAfter >= seatsPerRow) {
            throw new IllegalArgumentException("venue of " + sections + " sections x " + rows + " rows x "
                    + seatsPerRow + " seats, aisle after " + aisleAfter + ": out of bounds");
        }
    }

    /** {@code sections x rows x seatsPerRow}, with an aisle in the middle of rows of 8 seats or more. */
    public static Venue of(int sections, int rows, int seatsPerRow) {
        return new Venue(sections, rows, seatsPerRow, seatsPerRow >= 8 ? seatsPerRow / 2 : 0);
    }

    public int total() {
        return sections * rows * seatsPerRow;
    }

    public static String sectionId(int section) {
        return String.valueOf((char) ('A' + section));
    }

    public static String rowId(int row) {
        return Integer.toString(row + 1);
    }

    public static String seatId(int section, int row, int number) {
        return sectionId(section) + rowId(row) + "-" + number;
    }

    /** The seat map to create the item with: numbered rows, rank by row. */
    public SeatMap seatMap() {
        SeatMap.Builder m = SeatMap.newBuilder();
        for (int s = 0; s < sections; s++) {
            SeatSection.Builder sec = SeatSection.newBuilder().setSectionId(sectionId(s));
            for (int r = 0; r < rows; r++) {
                SeatRow.Builder row = SeatRow.newBuilder().setRowId(rowId(r)).setCount(seatsPerRow).setFirstNumber(1)
                        .setSeatPrefix(sectionId(s) + rowId(r) + "-").setRank(r + 1);
                if (aisleAfter > 0) {
                    row.addAislesAfter(aisleAfter);
                }
                sec.addRows(row);
            }
            m.addSections(sec);
        }
        return m.build();
    }

    /** Every seat's place, by seat id. */
    public Map<String, Place> places() {
        Map<String, Place> out = new HashMap<>(total() * 2);
        for (int s = 0; s < sections; s++) {
            for (int r = 0; r < rows; r++) {
                for (int n = 1; n <= seatsPerRow; n++) {
                    out.put(seatId(s, r, n), new Place(s, r, n));
                }
            }
        }
        return out;
    }

    /**
     * Why {@code seats} are not {@code k} adjacent seats of one row of this venue (consecutive
     * numbers, not across the aisle), or null when they are.
     */
    public String notAdjacent(List<String> seats, int k, Map<String, Place> places) {
        if (seats.size() != k) {
            return seats.size() + " seats, asked for " + k;
        }
        List<Place> ps = new ArrayList<>(seats.size());
        for (String id : seats) {
            Place p = places.get(id);
            if (p == null) {
                return "seat " + id + " is not in the venue";
            }
            ps.add(p);
        }
        ps.sort((a, b) -> Integer.compare(a.number(), b.number()));
        Place first = ps.get(0);
        for (int i = 1; i < ps.size(); i++) {
            Place p = ps.get(i);
            Place prev = ps.get(i - 1);
            if (p.section() != first.section() || p.row() != first.row()) {
                return "not in one row";
            }
            if (p.number() != prev.number() + 1) {
                return "a gap between seats " + prev.number() + " and " + p.number();
            }
            if (aisleAfter > 0 && prev.number() == aisleAfter) {
                return "across the aisle after seat " + aisleAfter;
            }
        }
        return null;
    }

    /** The most adjacent seats one row offers (the longer side of the aisle). */
    public int longestRun() {
        return aisleAfter > 0 ? Math.max(aisleAfter, seatsPerRow - aisleAfter) : seatsPerRow;
    }

    /** E.g. "4 sections x 20 rows x 25 seats, an aisle after seat 12". */
    public String describe() {
        return sections + " section" + (sections == 1 ? "" : "s") + " x " + rows + " row" + (rows == 1 ? "" : "s")
                + " x " + seatsPerRow + " seat" + (seatsPerRow == 1 ? "" : "s")
                + (aisleAfter > 0 ? ", an aisle after seat " + aisleAfter : ", no aisle");
    }
}
