package io.lastunit.admin.demo;

import io.lastunit.api.inventory.v1.GetSeatMapResponse;
import io.lastunit.api.inventory.v1.RowStates;
import io.lastunit.api.inventory.v1.Stock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks a seat sale from the buyers' own answers ({@link SeatSale.Result}) against the venue the
 * demo created and the final map the router returned:
 * <ul>
 *   <li>every hold is k adjacent seats of one row of the venue, k as asked, not across the aisle;
 *   <li>no seat is in two holds at once: two holds of one seat are allowed only when the first was
 *       released before the second was granted (by the buyers' clocks: the first's Release was sent
 *       before the second's RESERVED answer arrived);
 *   <li>the map is the venue's seats, and each seat's state is what the buyers did: sold where a
 *       buyer confirmed, held where a buyer kept its hold, free elsewhere (a hold whose Confirm or
 *       Release failed may be either);
 *   <li>the map's counts and its stock agree with its rows.
 * </ul>
 * Pure, thread-safe.
 */
public final class SeatAudit {
    /** Problems listed at most (the rest are counted). */
    public static final int PROBLEMS_MAX = 20;

    /** The verdict and the map's counts (seats: sold + held + free + killed = the venue's total). */
    public record Report(List<String> problems, int holds, long sold, long held, long free, long killed) {
        public Report {
            problems = List.copyOf(problems);
        }

        public boolean ok() {
            return problems.isEmpty();
        }
    }

    private SeatAudit() {
    }

    public static Report check(Venue venue, SeatSale.Result sale, GetSeatMapResponse map) {
        Problems problems = new Problems();
        Map<String, Venue.Place> places = venue.places();

        // Every hold: k adjacent seats in one row.
        Map<String, List<SeatSale.Hold>> bySeat = new HashMap<>();
        for (SeatSale.Hold h : sale.holds()) {
            String why = venue.notAdjacent(h.seats(), h.asked(), places);
            if (why != null) {
                problems.add("hold of " + h.buyer() + " (ADJACENT " + h.asked() + ") is " + h.seats()
                        + ": not " + h.asked() + " adjacent seats in one row: " + why);
            }
            for (String s : h.seats()) {
                bySeat.computeIfAbsent(s, x -> new ArrayList<>(2)).add(h);
            }
        }
        // No seat in two holds at once.
        for (Map.Entry<String, List<SeatSale.Hold>> e : bySeat.entrySet()) {
            List<SeatSale.Hold> hs = e.getValue();
            for (int i = 0; i < hs.size(); i++) {
                for (int j = i + 1; j < hs.size(); j++) {
                    SeatSale.Hold a = hs.get(i);
                    SeatSale.Hold b = hs.get(j);
                    if (Math.max(a.reservedAt(), b.reservedAt()) < Math.min(a.releaseSentAt(), b.releaseSentAt())) {
                        problems.add("seat " + e.getKey() + " is in two holds at once: " + a.buyer() + "'s ("
                                + a.fate() + ") and " + b.buyer() + "'s (" + b.fate() + ")");
                    }
                }
            }
        }

        // The map: the venue's seats, each in the state the buyers left it.
        long[] c = new long[4];
        int expectedRows = venue.sections() * venue.rows();
        if (map.getRowsCount() != expectedRows) {
            problems.add("the map has " + map.getRowsCount() + " rows; the venue has " + expectedRows);
        }
        int rowIndex = 0;
        for (RowStates r : map.getRowsList()) {
            int section = rowIndex / venue.rows();
            int row = rowIndex % venue.rows();
            rowIndex++;
            if (section < venue.sections() && (!r.getSectionId().equals(Venue.sectionId(section))
                    || !r.getRowId().equals(Venue.rowId(row)))) {
                problems.add("the map's row " + rowIndex + " is " + r.getSectionId() + "/" + r.getRowId()
                        + "; the venue's is " + Venue.sectionId(section) + "/" + Venue.rowId(row));
            }
            String states = r.getStates().replace("|", "");
            if (states.length() != r.getSeatIdsCount()) {
                problems.add("row " + r.getSectionId() + "/" + r.getRowId() + " has " + r.getSeatIdsCount()
                        + " seat ids but " + states.length() + " states");
                continue;
            }
            for (int k = 0; k < states.length(); k++) {
                char st = states.charAt(k);
                String seat = r.getSeatIdsList().get(k);
                if (!places.containsKey(seat)) {
                    problems.add("seat " + seat + " on the map is not in the venue");
                }
                switch (st) {
                    case 's' -> c[0]++;
                    case 'h' -> c[1]++;
                    case '.' -> c[2]++;
                    case 'x' -> c[3]++;
                    default -> problems.add("seat " + seat + " has state '" + st + "'");
                }
                String expected = expected(bySeat.get(seat));
                if (expected.indexOf(st) < 0) {
                    problems.add("seat " + seat + " is " + name(st) + " on the map; by the buyers' answers it is "
                            + names(expected));
                }
            }
        }
        long seatsOnMap = c[0] + c[1] + c[2] + c[3];
        if (seatsOnMap != venue.total()) {
            problems.add("the map has " + seatsOnMap + " seats; the venue has " + venue.total());
        }
        if (map.getSold() != c[0] || map.getHeld() != c[1] || map.getFree() != c[2] || map.getKilled() != c[3]) {
            problems.add("the map's counts (sold " + map.getSold() + ", held " + map.getHeld() + ", free "
                    + map.getFree() + ", killed " + map.getKilled() + ") differ from its rows (" + c[0] + ", "
                    + c[1] + ", " + c[2] + ", " + c[3] + ")");
        }
        Stock s = map.getStock();
        if (s.getSold() != c[0] || s.getHeld() != c[1] || s.getAvailable() != c[2] || s.getKilled() != c[3]
                || s.getTotal() + s.getKilled() != venue.total()) {
            problems.add("the stock (total " + s.getTotal() + ", sold " + s.getSold() + ", held " + s.getHeld()
                    + ", available " + s.getAvailable() + ", killed " + s.getKilled() + ") differs from the map's rows"
                    + " (sold " + c[0] + ", held " + c[1] + ", free " + c[2] + ", killed " + c[3] + ")");
        }
        if (sale.holdsWith(SeatSale.Fate.UNKNOWN) == 0) {
            if (c[0] != sale.seatsWith(SeatSale.Fate.SOLD)) {
                problems.add("sold on the map " + c[0] + " != seats the buyers confirmed "
                        + sale.seatsWith(SeatSale.Fate.SOLD));
            }
            if (c[1] != sale.seatsWith(SeatSale.Fate.HELD)) {
                problems.add("held on the map " + c[1] + " != seats the buyers kept held "
                        + sale.seatsWith(SeatSale.Fate.HELD));
            }
        }
        return new Report(problems.list(), sale.holds().size(), c[0], c[1], c[2], c[3]);
    }

    /** The states a seat may be in, by the holds the buyers got of it: "s", "h", "." or two of them. */
    private static String expected(List<SeatSale.Hold> holds) {
        if (holds == null) {
            return ".";
        }
        String free = ".";
        for (SeatSale.Hold h : holds) {
            switch (h.fate()) {
                case SOLD -> {
                    return "s";
                }
                case HELD -> {
                    return "h";
                }
                case UNKNOWN -> {
                    return h.plan() == SeatSale.Plan.CONFIRM ? "sh" : "h.";
                }
                case RELEASED -> {
                    // free again, unless a later hold has it
                }
                default -> throw new AssertionError(h.fate());
            }
        }
        return free;
    }

    private static String name(char st) {
        return switch (st) {
            case 's' -> "sold";
            case 'h' -> "held";
            case '.' -> "free";
            case 'x' -> "off sale";
            default -> "'" + st + "'";
        };
    }

    private static String names(String states) {
        List<String> n = new ArrayList<>();
        for (int i = 0; i < states.length(); i++) {
            n.add(name(states.charAt(i)));
        }
        return String.join(" or ", n);
    }

    /** A bounded list of problems. */
    private static final class Problems {
        private final List<String> list = new ArrayList<>();
        private int more;

        void add(String p) {
            if (list.size() < PROBLEMS_MAX) {
                list.add(p);
            } else {
                more++;
            }
        }

        List<String> list() {
            if (more == 0) {
                return list;
            }
            List<String> out = new ArrayList<>(list);
            out.add("... and " + more + " more");
            return out;
        }
    }
}
