package io.lastunit.shard.seats.plan;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An item's seat map arranged for deciding. Every seat gets a <b>layout index</b>
 * {@code 0..size-1}: sections in order of first appearance in the list given to {@link #of}, rows in
 * order of first appearance within their section, seats by {@link SeatSpec#order} within their row.
 * So a section's seats, a row's seats and a segment's seats each occupy consecutive indexes, and a
 * free set is a {@link BitSet} over layout indexes.
 *
 * <p><b>Adjacency.</b> Seats {@code i} and {@code i + 1} are adjacent iff they are in the same row
 * (consecutive in the row's sorted order; gaps between order numbers do not matter) and seat
 * {@code i} has no aisle after it. A row therefore splits at its aisles into <b>segments</b>; a run
 * of adjacent seats lies inside one segment.
 *
 * <p>Precomputed at {@link #of}, in O(n log n) for n seats: the id and number lookups, the section,
 * row and segment boundaries, a prefix sum of ranks, one bit mask per category (kept as a bit set
 * and as words) and the longest run for every section and category. Memory is O(n) words plus n/4
 * bytes per category: at most {@link #CATEGORIES_MAX} masks, which is also the hazard at the top of
 * the range (256 categories over a million seats are 64 MB of masks; over 100,000, 6.4 MB).
 *
 * <p>Immutable and thread-safe.
 */
public final class SeatLayout {
    /** Most seats in one layout: what this planner is built and measured for. */
    public static final int SEATS_MAX = 1_000_000;
    /** Most distinct categories in one layout (each costs a mask of n bits). */
    public static final int CATEGORIES_MAX = 256;

    /** A row and its seats' layout indexes {@code [from, to)}. */
    public record Row(String sectionId, String rowId, int from, int to) {
        public int size() {
            return to - from;
        }
    }

    private final SeatSpec[] seats;
    private final List<Row> rows;
    private final Map<String, Integer> indexById;
    /** Seat numbers ascending, and the layout index of each. */
    private final int[] seatNos;
    private final int[] indexBySeatNo;
    private final List<String> sectionIds;
    private final Map<String, Integer> sectionIndex;
    /** Layout index where each section starts; one more entry for the end. */
    private final int[] sectionStarts;
    /** Segment number where each section starts; one more entry for the end. */
    private final int[] sectionSegments;
    /** Layout index where each segment starts; one more entry for the end. */
    private final int[] segmentStarts;
    /** Bit i set iff seat i is the last of its segment. Never mutated. */
    private final BitSet lastInSegment;
    private final long[] lastInSegmentWords;
    /** rankPrefix[i] = sum of the ranks of seats 0..i-1. */
    private final long[] rankPrefix;
    private final List<String> categories;
    private final Map<String, Integer> categoryIndex;
    /** The seats of each category, as bit sets and as words. Never mutated. */
    private final BitSet[] categoryMasks;
    private final long[][] categoryWords;
    /** Longest run by {@link #runKey}; absent = 0. */
    private final Map<Long, Integer> longestRuns;

    /**
     * The layout of {@code seats}, given in any order. Refuses (IllegalArgumentException naming the
     * problem) no seats, more than {@link #SEATS_MAX}, a null seat, a duplicate seatId, a duplicate
     * seatNo, a duplicate order within a row and more than {@link #CATEGORIES_MAX} categories.
     * Negative seatNo, order or rank and empty ids are refused when the {@link SeatSpec} is built.
     */
    public static SeatLayout of(List<SeatSpec> seats) {
        if (seats == null || seats.isEmpty()) {
            throw new IllegalArgumentException("a seat layout needs at least one seat");
        }
        if (seats.size() > SEATS_MAX) {
            throw new IllegalArgumentException("seats=" + seats.size() + " is more than " + SEATS_MAX);
        }
        Map<String, Map<String, List<SeatSpec>>> bySection = new LinkedHashMap<>();
        for (int k = 0; k < seats.size(); k++) {
            SeatSpec s = seats.get(k);
            if (s == null) {
                throw new IllegalArgumentException("seat #" + k + " of " + seats.size() + " is null");
            }
            bySection.computeIfAbsent(s.sectionId(), x -> new LinkedHashMap<>())
                    .computeIfAbsent(s.rowId(), x -> new ArrayList<>()).add(s);
        }
        SeatSpec[] ordered = new SeatSpec[seats.size()];
        List<Row> rows = new ArrayList<>();
        int next = 0;
        for (Map.Entry<String, Map<String, List<SeatSpec>>> section : bySection.entrySet()) {
            for (Map.Entry<String, List<SeatSpec>> row : section.getValue().entrySet()) {
                List<SeatSpec> rowSeats = row.getValue();
                rowSeats.sort(Comparator.comparingInt(SeatSpec::order));
                int from = next;
                for (SeatSpec s : rowSeats) {
                    if (next > from && ordered[next - 1].order() == s.order()) {
                        throw new IllegalArgumentException("order=" + s.order() + " appears twice in section '"
                                + section.getKey() + "', row '" + row.getKey() + "' (seats '"
                                + ordered[next - 1].seatId() + "' and '" + s.seatId() + "')");
                    }
                    ordered[next++] = s;
                }
                rows.add(new Row(section.getKey(), row.getKey(), from, next));
            }
        }
        return new SeatLayout(ordered, rows);
    }

    private SeatLayout(SeatSpec[] seats, List<Row> rows) {
        int n = seats.length;
        this.seats = seats;
        this.rows = Collections.unmodifiableList(rows);
        this.indexById = new HashMap<>(n * 2);
        long[] numbered = new long[n];
        for (int i = 0; i < n; i++) {
            Integer before = indexById.put(seats[i].seatId(), i);
            if (before != null) {
                throw new IllegalArgumentException("seatId '" + seats[i].seatId() + "' appears twice (seatNo="
                        + seats[before].seatNo() + " and seatNo=" + seats[i].seatNo() + ")");
            }
            numbered[i] = ((long) seats[i].seatNo() << 32) | i;
        }
        Arrays.sort(numbered);
        this.seatNos = new int[n];
        this.indexBySeatNo = new int[n];
        for (int k = 0; k < n; k++) {
            seatNos[k] = (int) (numbered[k] >>> 32);
            indexBySeatNo[k] = (int) numbered[k];
            if (k > 0 && seatNos[k] == seatNos[k - 1]) {
                throw new IllegalArgumentException("seatNo=" + seatNos[k] + " appears twice (seats '"
                        + seats[indexBySeatNo[k - 1]].seatId() + "' and '" + seats[indexBySeatNo[k]].seatId() + "')");
            }
        }
        this.categoryIndex = new HashMap<>();
        List<String> cats = new ArrayList<>();
        List<BitSet> masks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String c = seats[i].category();
            Integer ci = categoryIndex.get(c);
            if (ci == null) {
                if (cats.size() == CATEGORIES_MAX) {
                    throw new IllegalArgumentException("more than " + CATEGORIES_MAX + " categories (the "
                            + (CATEGORIES_MAX + 1) + "th is '" + c + "' at seat '" + seats[i].seatId() + "')");
                }
                ci = cats.size();
                categoryIndex.put(c, ci);
                cats.add(c);
                masks.add(new BitSet());
            }
            masks.get(ci).set(i);
        }
        this.categories = List.copyOf(cats);
        this.categoryMasks = masks.toArray(new BitSet[0]);
        this.categoryWords = new long[categoryMasks.length][];
        for (int ci = 0; ci < categoryMasks.length; ci++) {
            categoryWords[ci] = categoryMasks[ci].toLongArray();
        }
        this.rankPrefix = new long[n + 1];
        for (int i = 0; i < n; i++) {
            rankPrefix[i + 1] = rankPrefix[i] + seats[i].rank();
        }
        this.lastInSegment = new BitSet(n);
        List<String> sections = new ArrayList<>();
        List<Integer> sectionStartList = new ArrayList<>();
        List<Integer> sectionSegmentList = new ArrayList<>();
        List<Integer> segmentStartList = new ArrayList<>();
        for (Row r : rows) {
            if (sections.isEmpty() || !sections.get(sections.size() - 1).equals(r.sectionId())) {
                sections.add(r.sectionId());
                sectionStartList.add(r.from());
                sectionSegmentList.add(segmentStartList.size());
            }
            segmentStartList.add(r.from());
            for (int i = r.from(); i < r.to(); i++) {
                if (i == r.to() - 1) {
                    lastInSegment.set(i);
                } else if (seats[i].aisleAfter()) {
                    lastInSegment.set(i);
                    segmentStartList.add(i + 1);
                }
            }
        }
        sectionStartList.add(n);
        sectionSegmentList.add(segmentStartList.size());
        segmentStartList.add(n);
        this.lastInSegmentWords = lastInSegment.toLongArray();
        this.sectionIds = List.copyOf(sections);
        this.sectionIndex = new HashMap<>();
        for (int si = 0; si < sections.size(); si++) {
            sectionIndex.put(sections.get(si), si);
        }
        this.sectionStarts = sectionStartList.stream().mapToInt(Integer::intValue).toArray();
        this.sectionSegments = sectionSegmentList.stream().mapToInt(Integer::intValue).toArray();
        this.segmentStarts = segmentStartList.stream().mapToInt(Integer::intValue).toArray();
        this.longestRuns = longestRuns();
    }

    /** One pass over the segments: the longest segment and one-category stretch, per section and overall. */
    private Map<Long, Integer> longestRuns() {
        Map<Long, Integer> out = new HashMap<>();
        for (int si = 0; si < sectionIds.size(); si++) {
            for (int seg = sectionSegments[si]; seg < sectionSegments[si + 1]; seg++) {
                int from = segmentStarts[seg];
                int to = segmentStarts[seg + 1];
                out.merge(runKey(si, -1), to - from, Math::max);
                out.merge(runKey(-1, -1), to - from, Math::max);
                for (int j = from; j < to; ) {
                    int ci = categoryIndex.get(seats[j].category());
                    int k = j + 1;
                    while (k < to && categoryMasks[ci].get(k)) {
                        k++;
                    }
                    out.merge(runKey(si, ci), k - j, Math::max);
                    out.merge(runKey(-1, ci), k - j, Math::max);
                    j = k;
                }
            }
        }
        return out;
    }

    private static long runKey(int section, int category) {
        return ((long) (section + 1) << 32) | (category + 1);
    }

    public int size() {
        return seats.length;
    }

    /** Layout index (0..size-1) of a seat number, or -1. O(log n). */
    public int indexOfSeatNo(int seatNo) {
        int k = Arrays.binarySearch(seatNos, seatNo);
        return k >= 0 ? indexBySeatNo[k] : -1;
    }

    /** Layout index of a seat id, or -1 (unknown id). */
    public int indexOf(String seatId) {
        Integer i = indexById.get(seatId);
        return i == null ? -1 : i;
    }

    public SeatSpec seatAt(int index) {
        return seats[index];
    }

    public boolean hasSection(String sectionId) {
        return sectionIndex.containsKey(sectionId);
    }

    public boolean hasCategory(String category) {
        return categoryIndex.containsKey(category);
    }

    /** Section ids in layout order. */
    public List<String> sectionIds() {
        return sectionIds;
    }

    /** Categories in order of first appearance in layout order. */
    public List<String> categories() {
        return categories;
    }

    /** Rows in layout order with their seat index ranges (a row's seats occupy consecutive layout indexes). */
    public List<Row> rows() {
        return rows;
    }

    /** Seat {@code index} and seat {@code index + 1} are adjacent (same row, no aisle between). */
    public boolean adjacentToNext(int index) {
        return index >= 0 && index < seats.length - 1 && !lastInSegment.get(index);
    }

    /**
     * The longest run of adjacent seats anywhere in the map: an "adjacent N" larger than this can
     * never be granted, so the caller refuses it as bad input.
     */
    public int longestRun() {
        return longestRun(-1, -1);
    }

    /** Same, restricted to a section and/or category (null = any); 0 for an unknown one. */
    public int longestRun(String sectionId, String category) {
        Integer si = sectionId == null ? Integer.valueOf(-1) : sectionIndex.get(sectionId);
        Integer ci = category == null ? Integer.valueOf(-1) : categoryIndex.get(category);
        return si == null || ci == null ? 0 : longestRun(si, ci);
    }

    int longestRun(int section, int category) {
        return longestRuns.getOrDefault(runKey(section, category), 0);
    }

    /** The seats a request filtered by section and category may take; IllegalArgumentException for an unknown one. */
    SeatFilter filter(String sectionId, String category) {
        int si = -1;
        if (sectionId != null) {
            Integer known = sectionIndex.get(sectionId);
            if (known == null) {
                throw new IllegalArgumentException("sectionId '" + sectionId + "' is not in the layout (sections="
                        + sectionIds.size() + ")");
            }
            si = known;
        }
        int ci = -1;
        if (category != null) {
            Integer known = categoryIndex.get(category);
            if (known == null) {
                throw new IllegalArgumentException("category '" + category + "' is not in the layout (categories="
                        + categories + ")");
            }
            ci = known;
        }
        int from = si < 0 ? 0 : sectionStarts[si];
        int to = si < 0 ? seats.length : sectionStarts[si + 1];
        return new SeatFilter(si, ci, from, to, ci < 0 ? null : categoryMasks[ci], ci < 0 ? null : categoryWords[ci],
                lastInSegment, lastInSegmentWords);
    }

    int segmentCount() {
        return segmentStarts.length - 1;
    }

    /** Layout index where segment {@code seg} starts; {@code segmentStart(segmentCount())} is size(). */
    int segmentStart(int seg) {
        return segmentStarts[seg];
    }

    /** The segments of section {@code section} (-1 = all) are {@code [sectionSegmentFrom, sectionSegmentTo)}. */
    int sectionSegmentFrom(int section) {
        return section < 0 ? 0 : sectionSegments[section];
    }

    int sectionSegmentTo(int section) {
        return section < 0 ? segmentCount() : sectionSegments[section + 1];
    }

    /** Layout index just past the segment of seat {@code index}. */
    int segmentEnd(int index) {
        return lastInSegment.nextSetBit(index) + 1;
    }

    /** Sum of the ranks of seats {@code [from, to)}. O(1). */
    long rankSum(int from, int to) {
        return rankPrefix[to] - rankPrefix[from];
    }

    @Override
    public String toString() {
        return "SeatLayout[seats=" + seats.length + ", sections=" + sectionIds.size() + ", rows=" + rows.size()
                + ", segments=" + segmentCount() + ", categories=" + categories.size() + ", longestRun="
                + longestRun() + "]";
    }
}
