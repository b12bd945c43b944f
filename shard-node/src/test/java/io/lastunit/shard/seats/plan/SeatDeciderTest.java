package io.lastunit.shard.seats.plan;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The seat rules as examples: small maps, a free set in, a decision and the free set out. */
class SeatDeciderTest {

    /** A map built row by row; seat numbers count down from 2,000,000, so they are not in layout order. */
    static final class Seats {
        final List<SeatSpec> specs = new ArrayList<>();
        private int seatNo = 2_000_000;

        /**
         * One row: each token is a seat, its category letters then its rank ("A1"; "1" alone has the
         * category ""); a "|" puts an aisle after the seat before it. Orders go 10, 20, 30, ...
         */
        Seats row(String section, String row, String seats) {
            String[] tokens = seats.trim().split("\\s+");
            int k = 0;
            for (int t = 0; t < tokens.length; t++) {
                if (tokens[t].equals("|")) {
                    continue;
                }
                k++;
                boolean aisle = t + 1 < tokens.length && tokens[t + 1].equals("|");
                String category = tokens[t].replaceAll("[0-9]", "");
                int rank = Integer.parseInt(tokens[t].replaceAll("[^0-9]", ""));
                specs.add(new SeatSpec(seatNo--, section + row + "-" + k, section, row, 10 * k, category, rank, aisle));
            }
            return this;
        }

        SeatLayout layout() {
            return SeatLayout.of(specs);
        }
    }

    /** All seats free but {@code taken}. */
    static BitSet freeBut(SeatLayout layout, int... taken) {
        BitSet free = new BitSet(layout.size());
        free.set(0, layout.size());
        for (int t : taken) {
            free.clear(t);
        }
        return free;
    }

    static SeatDecision granted(int... seats) {
        return new SeatDecision.Granted(seats);
    }

    static final SeatDecision SOLD_OUT = new SeatDecision.SoldOut();

    @Nested
    class Layout {
        @Test
        void layoutOrder_isSectionsThenRowsByFirstAppearance_thenOrderWithinTheRow() {
            List<SeatSpec> specs = new ArrayList<>(List.of(
                    new SeatSpec(7, "b-x-2", "B", "X", 20, "", 0, false),
                    new SeatSpec(3, "a-y-1", "A", "Y", 5, "", 0, false),
                    new SeatSpec(9, "b-x-1", "B", "X", 3, "", 0, false),
                    new SeatSpec(1, "a-z-1", "A", "Z", 1, "", 0, false),
                    new SeatSpec(0, "a-y-2", "A", "Y", 900, "", 0, false),
                    new SeatSpec(4, "a-x-1", "A", "X", 2, "", 0, false)));
            SeatLayout layout = SeatLayout.of(specs);
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < layout.size(); i++) {
                ids.add(layout.seatAt(i).seatId());
            }
            assertThat(ids).containsExactly("b-x-1", "b-x-2", "a-y-1", "a-y-2", "a-z-1", "a-x-1");
            assertThat(layout.rows()).containsExactly(new SeatLayout.Row("B", "X", 0, 2),
                    new SeatLayout.Row("A", "Y", 2, 4), new SeatLayout.Row("A", "Z", 4, 5),
                    new SeatLayout.Row("A", "X", 5, 6));
            assertThat(layout.sectionIds()).containsExactly("B", "A");
            assertThat(layout.indexOf("a-y-2")).isEqualTo(3);
            assertThat(layout.indexOf("nope")).isEqualTo(-1);
            assertThat(layout.indexOfSeatNo(9)).isEqualTo(0);
            assertThat(layout.indexOfSeatNo(4)).isEqualTo(5);
            assertThat(layout.indexOfSeatNo(2)).isEqualTo(-1);
            assertThat(layout.hasSection("A")).isTrue();
            assertThat(layout.hasSection("C")).isFalse();
            assertThat(layout.hasCategory("")).isTrue();
            assertThat(layout.hasCategory("A")).isFalse();
        }

        @Test
        void sameRowIdInTwoSections_isTwoRows() {
            SeatLayout layout = new Seats().row("S", "R", "1 1").row("T", "R", "1 1").layout();
            assertThat(layout.rows()).hasSize(2);
            assertThat(layout.adjacentToNext(1)).isFalse();
            assertThat(layout.longestRun()).isEqualTo(2);
        }

        @Test
        void longestRun_isCutByAislesAndRows_notByGapsInOrder_andCanBeFiltered() {
            SeatLayout layout = new Seats()
                    .row("S", "1", "A1 A1 A1 | A1 B1 B1")
                    .row("S", "2", "A1 A1")
                    .row("T", "1", "B1 B1 B1 B1 A1")
                    .layout();
            assertThat(layout.longestRun()).isEqualTo(5);
            assertThat(layout.longestRun("S", null)).isEqualTo(3);
            assertThat(layout.longestRun(null, "A")).isEqualTo(3);
            assertThat(layout.longestRun("T", "A")).isEqualTo(1);
            assertThat(layout.longestRun("T", "B")).isEqualTo(4);
            assertThat(layout.longestRun("S", "B")).isEqualTo(2);
            assertThat(layout.longestRun("X", null)).isZero();
            assertThat(layout.longestRun(null, "C")).isZero();
            // orders 10, 20, 30: gaps, yet adjacent; the aisle after the third seat splits the row
            assertThat(layout.adjacentToNext(0)).isTrue();
            assertThat(layout.adjacentToNext(2)).isFalse();
        }

        @Test
        void of_refusesDuplicatesAndBadSeats_namingTheProblem() {
            SeatSpec a = new SeatSpec(1, "a", "S", "R", 1, "", 0, false);
            assertThatThrownBy(() -> SeatLayout.of(List.of(a, new SeatSpec(2, "a", "S", "R", 2, "", 0, false))))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seatId 'a' appears twice");
            assertThatThrownBy(() -> SeatLayout.of(List.of(a, new SeatSpec(1, "b", "S", "R", 2, "", 0, false))))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seatNo=1 appears twice");
            assertThatThrownBy(() -> SeatLayout.of(List.of(a, new SeatSpec(2, "b", "S", "R", 1, "", 0, false))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("order=1 appears twice in section 'S', row 'R'");
            // the same order in another row, or in a row of the same id in another section, is fine
            assertThat(SeatLayout.of(List.of(a, new SeatSpec(2, "b", "S", "Q", 1, "", 0, false),
                    new SeatSpec(3, "c", "T", "R", 1, "", 0, false))).size()).isEqualTo(3);
            assertThatThrownBy(() -> SeatLayout.of(List.of())).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at least one seat");
            assertThatThrownBy(() -> SeatLayout.of(Collections.singletonList(null)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seat #0 of 1 is null");
        }

        @Test
        void seatSpec_refusesNegativesAndEmptyIds() {
            assertThatThrownBy(() -> new SeatSpec(-1, "a", "S", "R", 1, "", 0, false))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seatNo=-1 is negative");
            assertThatThrownBy(() -> new SeatSpec(1, "a", "S", "R", -2, "", 0, false))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("order=-2 is negative");
            assertThatThrownBy(() -> new SeatSpec(1, "a", "S", "R", 1, "", -3, false))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rank=-3 is negative");
            assertThatThrownBy(() -> new SeatSpec(1, "", "S", "R", 1, "", 0, false))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seatId is empty");
            assertThatThrownBy(() -> new SeatSpec(1, "a", "", "R", 1, "", 0, false))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sectionId is empty");
            assertThatThrownBy(() -> new SeatSpec(1, "a", "S", null, 1, "", 0, false))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rowId is empty");
            assertThatThrownBy(() -> new SeatSpec(1, "a", "S", "R", 1, null, 0, false))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("category is null");
        }

        @Test
        void of_refusesMoreCategoriesThanTheLimit() {
            List<SeatSpec> specs = new ArrayList<>();
            for (int i = 0; i <= SeatLayout.CATEGORIES_MAX; i++) {
                specs.add(new SeatSpec(i, "s" + i, "S", "R", i, "c" + i, 0, false));
            }
            assertThatThrownBy(() -> SeatLayout.of(specs)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("more than " + SeatLayout.CATEGORIES_MAX + " categories");
        }
    }

    @Nested
    class Specific {
        final SeatLayout layout = new Seats().row("S", "R", "A1 A1 A1 A1").layout();
        final SeatDecider decider = new SeatDecider(layout);

        @Test
        void allFree_grantsThemAll_ascending_andClearsThem() {
            BitSet free = freeBut(layout);
            assertThat(decider.decide(free, SeatRequest.specific(3, 1))).isEqualTo(granted(1, 3));
            assertThat(free).isEqualTo(freeBut(layout, 1, 3));
        }

        @Test
        void someNotFree_isTaken_listingExactlyThose_andChangesNothing() {
            BitSet free = freeBut(layout, 0, 2);
            assertThat(decider.decide(free, SeatRequest.specific(3, 2, 1, 0)))
                    .isEqualTo(new SeatDecision.Taken(new int[] {0, 2}));
            assertThat(free).isEqualTo(freeBut(layout, 0, 2));
        }

        @Test
        void ignoresFilters() {
            BitSet free = freeBut(layout);
            SeatRequest r = new SeatRequest(SeatRequest.Mode.SPECIFIC, 1, new int[] {2}, "elsewhere", "Z");
            assertThat(decider.decide(free, r)).isEqualTo(granted(2));
        }

        @Test
        void aSeatOutsideTheLayout_isRefused() {
            assertThatThrownBy(() -> decider.decide(freeBut(layout), SeatRequest.specific(4)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seat index 4");
        }
    }

    @Nested
    class Any {
        // one row, seats 0..9, an aisle after seat 6
        final SeatLayout layout = new Seats().row("S", "R", "1 1 1 1 1 1 1 | 1 1 1").layout();
        final SeatDecider decider = new SeatDecider(layout);

        @Test
        void takesOrphansFirst_thenShortRuns_beforeBreakingLongOnes() {
            // free: 0 | 2 3 | 5 6 (aisle) 7 8 9 -> runs [0], [2,3], [5,6], [7,8,9]
            BitSet free = freeBut(layout, 1, 4);
            assertThat(decider.decide(free.get(0, 10), SeatRequest.any(1, null, null))).isEqualTo(granted(0));
            assertThat(decider.decide(free.get(0, 10), SeatRequest.any(3, null, null))).isEqualTo(granted(0, 2, 3));
            assertThat(decider.decide(free.get(0, 10), SeatRequest.any(4, null, null))).isEqualTo(granted(0, 2, 3, 5));
            assertThat(decider.decide(free.get(0, 10), SeatRequest.any(6, null, null)))
                    .isEqualTo(granted(0, 2, 3, 5, 6, 7));
        }

        @Test
        void equalRuns_goInLayoutOrder_andTheLastRunIsCutFromItsStart() {
            BitSet free = freeBut(layout, 3); // runs [0,1,2], [4,5,6], [7,8,9]
            assertThat(decider.decide(free, SeatRequest.any(4, null, null))).isEqualTo(granted(0, 1, 2, 4));
            assertThat(free).isEqualTo(freeBut(layout, 0, 1, 2, 3, 4));
        }

        @Test
        void fewerFreeThanAsked_isSoldOut_andChangesNothing() {
            BitSet free = freeBut(layout, 0, 1, 2, 3, 4, 5, 6, 7);
            assertThat(decider.decide(free, SeatRequest.any(3, null, null))).isEqualTo(SOLD_OUT);
            assertThat(free).isEqualTo(freeBut(layout, 0, 1, 2, 3, 4, 5, 6, 7));
        }

        @Test
        void filters_bySectionAndCategory_andRanksRunsOfMatchingSeats() {
            SeatLayout l = new Seats()
                    .row("S", "1", "A1 A1 B1 A1 A1 A1")
                    .row("T", "1", "A1 B1 B1")
                    .layout();
            SeatDecider d = new SeatDecider(l);
            // category A runs: [0,1], [3,4,5], [6]: the single seat in T first
            assertThat(d.decide(freeBut(l), SeatRequest.any(2, null, "A"))).isEqualTo(granted(0, 6));
            assertThat(d.decide(freeBut(l), SeatRequest.any(2, "S", "A"))).isEqualTo(granted(0, 1));
            assertThat(d.decide(freeBut(l), SeatRequest.any(3, "T", null))).isEqualTo(granted(6, 7, 8));
            assertThat(d.decide(freeBut(l), SeatRequest.any(3, "T", "B"))).isEqualTo(SOLD_OUT);
            assertThatThrownBy(() -> d.decide(freeBut(l), SeatRequest.any(1, "U", null)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sectionId 'U'");
            assertThatThrownBy(() -> d.decide(freeBut(l), SeatRequest.any(1, null, "C")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("category 'C'");
        }
    }

    @Nested
    class Adjacent {
        final SeatLayout layout = new Seats()
                .row("S", "1", "A1 A1 | A1 A1 A1")
                .row("S", "2", "A1 A1 A1 A1")
                .layout();
        final SeatDecider decider = new SeatDecider(layout);

        @Test
        void firstRunInLayoutOrder_thatIsLongEnough() {
            BitSet free = freeBut(layout);
            assertThat(decider.decide(free, SeatRequest.adjacent(2, null, null))).isEqualTo(granted(0, 1));
            assertThat(decider.decide(free, SeatRequest.adjacent(2, null, null))).isEqualTo(granted(2, 3));
            assertThat(decider.decide(free, SeatRequest.adjacent(2, null, null))).isEqualTo(granted(5, 6));
            assertThat(free).isEqualTo(freeBut(layout, 0, 1, 2, 3, 5, 6));
        }

        @Test
        void anAisleBlocks_gapsInOrderNumbersDoNot_andRowsAreNeverJoined() {
            // the row's seats have orders 10, 20, 30, ... : gaps, still adjacent
            assertThat(decider.decide(freeBut(layout), SeatRequest.adjacent(3, null, null)))
                    .isEqualTo(granted(2, 3, 4));
            // seats 1 | 2 are free together but an aisle runs between them; 4 and 5 are in two rows
            BitSet free = freeBut(layout, 0, 3, 6, 7, 8);
            assertThat(decider.decide(free, SeatRequest.adjacent(2, null, null))).isEqualTo(SOLD_OUT);
            assertThat(free).isEqualTo(freeBut(layout, 0, 3, 6, 7, 8));
        }

        @Test
        void longerThanAnyRun_isSoldOut() {
            assertThat(decider.decide(freeBut(layout), SeatRequest.adjacent(5, null, null))).isEqualTo(SOLD_OUT);
        }

        @Test
        void everySeatMustMatch() {
            SeatLayout l = new Seats().row("S", "1", "A1 B1 A1 A1").row("T", "1", "A1 A1").layout();
            SeatDecider d = new SeatDecider(l);
            assertThat(d.decide(freeBut(l), SeatRequest.adjacent(2, null, "A"))).isEqualTo(granted(2, 3));
            assertThat(d.decide(freeBut(l), SeatRequest.adjacent(2, "T", "A"))).isEqualTo(granted(4, 5));
            assertThat(d.decide(freeBut(l), SeatRequest.adjacent(2, null, "B"))).isEqualTo(SOLD_OUT);
        }
    }

    @Nested
    class Best {
        @Test
        void lowestRankSum_wins_whereverItIs() {
            SeatLayout l = new Seats().row("S", "1", "5 5 5 5").row("S", "2", "3 1 1 3").layout();
            assertThat(new SeatDecider(l).decide(freeBut(l), SeatRequest.best(2, null, null))).isEqualTo(granted(5, 6));
        }

        @Test
        void amongEqualSums_theOneLeavingNoOrphanWins_overAnEarlierOne() {
            SeatLayout l = new Seats().row("S", "1", "1 1 1 1 1").row("S", "2", "1 1 1").layout();
            SeatDecider d = new SeatDecider(l);
            // row 1: 0 and 4 taken, any pair of 1 2 3 orphans seat 1 or 3; row 2: 5 6 free, 7 taken, orphans nobody
            BitSet free = freeBut(l, 0, 4, 7);
            assertThat(d.decide(free, SeatRequest.best(2, null, null))).isEqualTo(granted(5, 6));
        }

        @Test
        void aLowerSum_beatsOrphanAvoidance() {
            SeatLayout l = new Seats().row("S", "1", "1 1 1 1 1").row("S", "2", "2 2").layout();
            BitSet free = freeBut(l, 0, 4);
            assertThat(new SeatDecider(l).decide(free, SeatRequest.best(2, null, null))).isEqualTo(granted(1, 2));
        }

        @Test
        void equalSumsAndNoOrphans_goInLayoutOrder_andAnOldOrphanDoesNotCount() {
            SeatLayout l = new Seats().row("S", "1", "1 1 1 1 1 1").row("S", "2", "1 1").layout();
            // seat 0 is an orphan already (1 taken); 2 3 4 5 free: 2 3 and 4 5 leave none, 3 4 orphans two
            BitSet free = freeBut(l, 1);
            assertThat(new SeatDecider(l).decide(free, SeatRequest.best(2, null, null))).isEqualTo(granted(2, 3));
        }

        @Test
        void anOrphanOfAnotherCategory_countsToo() {
            SeatLayout l = new Seats().row("S", "1", "A1 A1 B1").row("S", "2", "A1 A1").layout();
            SeatDecider d = new SeatDecider(l);
            assertThat(d.decide(freeBut(l), SeatRequest.best(2, null, "A"))).isEqualTo(granted(3, 4));
            // with seat 2 taken, row 1 orphans nobody and comes first
            assertThat(d.decide(freeBut(l, 2), SeatRequest.best(2, null, "A"))).isEqualTo(granted(0, 1));
        }

        @Test
        void filters_andNoRun_isSoldOut_changingNothing() {
            SeatLayout l = new Seats().row("S", "1", "A1 A1 A1").row("T", "1", "A5 B1 B1").layout();
            SeatDecider d = new SeatDecider(l);
            assertThat(d.decide(freeBut(l), SeatRequest.best(2, "T", null))).isEqualTo(granted(4, 5));
            assertThat(d.decide(freeBut(l), SeatRequest.best(2, "T", "A"))).isEqualTo(SOLD_OUT);
            BitSet free = freeBut(l, 1, 4);
            assertThat(d.decide(free, SeatRequest.best(2, "S", null))).isEqualTo(SOLD_OUT);
            assertThat(free).isEqualTo(freeBut(l, 1, 4));
        }
    }

    @Nested
    class Batches {
        @Test
        void decideAll_givesWhatDecideGivesOneByOne() {
            SeatLayout l = new Seats().row("S", "1", "A1 A1 A2 | A2 A3 A3").row("S", "2", "B1 B1 B1 B1")
                    .row("T", "1", "A1 B1 A1 B1").layout();
            SeatDecider d = new SeatDecider(l);
            List<SeatRequest> rs = List.of(SeatRequest.any(1, null, null), SeatRequest.adjacent(2, null, "A"),
                    SeatRequest.specific(9, 10), SeatRequest.best(2, null, null), SeatRequest.any(3, "T", null),
                    SeatRequest.adjacent(2, null, "A"), SeatRequest.any(4, null, "B"), SeatRequest.any(9, null, null),
                    SeatRequest.specific(13));
            BitSet one = freeBut(l, 7);
            List<SeatDecision> expected = new ArrayList<>();
            for (SeatRequest r : rs) {
                expected.add(d.decide(one, r));
            }
            BitSet all = freeBut(l, 7);
            assertThat(d.decideAll(all, rs)).isEqualTo(expected);
            assertThat(all).isEqualTo(one);
        }

        @Test
        void aFreeBitPastTheLayout_isRefused() {
            SeatLayout l = new Seats().row("S", "1", "1 1").layout();
            BitSet free = freeBut(l);
            free.set(2);
            assertThatThrownBy(() -> new SeatDecider(l).decide(free, SeatRequest.any(1, null, null)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seat index 2 set");
        }
    }

    @Nested
    class BoundedScans {
        final BitSet bits = new BitSet();

        BoundedScans() {
            bits.set(0, 300);
            bits.clear(150);
        }

        @Test
        void firstClear_findsTheFirstClearBit_orTheEnd_evenPastSixtyFourBits() {
            assertThat(SeatFilter.firstClear(bits, 10, 290)).isEqualTo(150);
            assertThat(SeatFilter.firstClear(bits, 100, 149)).isEqualTo(149);
            assertThat(SeatFilter.firstClear(bits, 151, 290)).isEqualTo(290);
            assertThat(SeatFilter.firstClear(bits, 140, 160)).isEqualTo(150);
            assertThat(SeatFilter.firstClear(bits, 250, 250)).isEqualTo(250);
        }

        @Test
        void firstSet_findsTheFirstSetBit_orTheEnd_evenPastSixtyFourBits() {
            BitSet few = new BitSet();
            few.set(150);
            assertThat(SeatFilter.firstSet(few, 10, 290)).isEqualTo(150);
            assertThat(SeatFilter.firstSet(few, 151, 290)).isEqualTo(290);
            assertThat(SeatFilter.firstSet(few, 140, 160)).isEqualTo(150);
            assertThat(SeatFilter.firstSet(bits, 150, 290)).isEqualTo(151);
        }

        @Test
        void lastClear_findsTheLastClearBit_orOneBeforeTheStart_evenPastSixtyFourBits() {
            assertThat(SeatFilter.lastClear(bits, 10, 290)).isEqualTo(150);
            assertThat(SeatFilter.lastClear(bits, 151, 299)).isEqualTo(150);
            assertThat(SeatFilter.lastClear(bits, 0, 149)).isEqualTo(-1);
            assertThat(SeatFilter.lastClear(bits, 140, 160)).isEqualTo(150);
            assertThat(SeatFilter.lastClear(bits, 20, 19)).isEqualTo(19);
        }
    }

    @Test
    void requests_checkTheirShape() {
        assertThatThrownBy(() -> SeatRequest.any(0, null, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("count=0");
        assertThatThrownBy(() -> new SeatRequest(SeatRequest.Mode.SPECIFIC, 2, new int[] {1}, null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count=2 but names 1");
        assertThatThrownBy(() -> SeatRequest.specific(1, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("twice");
        assertThatThrownBy(() -> new SeatRequest(SeatRequest.Mode.ANY, 1, new int[] {1}, null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chooses the seats");
        assertThat(SeatRequest.specific(2, 1)).isEqualTo(SeatRequest.specific(2, 1));
    }

    @Test
    void thePackage_dependsOnJavaAlone() {
        classes().that().resideInAPackage("io.lastunit.shard.seats.plan")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "io.lastunit.shard.seats.plan")
                .because("seat decisions are pure and stand alone")
                .check(new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                        .importPackages("io.lastunit.shard.seats.plan"));
    }

    /** Printed information only, never asserted: tests do not depend on the host's speed. */
    @Test
    void microTiming_onAHundredThousandSeats_printsOnly() {
        Seats seats = new Seats();
        String[] cats = {"A", "B", "C", "D"};
        for (int s = 0; s < 20; s++) {
            for (int r = 0; r < 50; r++) {
                StringBuilder row = new StringBuilder();
                for (int k = 0; k < 100; k++) {
                    row.append(cats[r % 4]).append(r * 10 + Math.abs(k - 50)).append(k % 20 == 19 ? " | " : " ");
                }
                seats.row("S" + s, "R" + r, row.toString());
            }
        }
        long t0 = System.nanoTime();
        SeatLayout layout = seats.layout();
        long built = System.nanoTime() - t0;
        SeatDecider decider = new SeatDecider(layout);
        Random rnd = new Random(42);
        List<List<SeatRequest>> batches = new ArrayList<>();
        for (int b = 0; b < 20; b++) {
            List<SeatRequest> batch = new ArrayList<>();
            for (int k = 0; k < 1000; k++) {
                int mode = rnd.nextInt(10);
                String section = rnd.nextInt(3) == 0 ? "S" + rnd.nextInt(20) : null;
                String category = rnd.nextInt(4) == 0 ? cats[rnd.nextInt(4)] : null;
                batch.add(mode < 4 ? SeatRequest.any(1 + rnd.nextInt(4), section, category)
                        : mode < 7 ? SeatRequest.best(1 + rnd.nextInt(4), section, category)
                        : mode < 9 ? SeatRequest.adjacent(1 + rnd.nextInt(4), section, category)
                        : SeatRequest.specific(rnd.nextInt(layout.size())));
            }
            batches.add(batch);
        }
        BitSet one = freeBut(layout);
        BitSet all = freeBut(layout);
        long single = 0;
        long batched = 0;
        for (List<SeatRequest> batch : batches) {
            long a = System.nanoTime();
            for (SeatRequest r : batch) {
                decider.decide(one, r);
            }
            long b = System.nanoTime();
            decider.decideAll(all, batch);
            long c = System.nanoTime();
            single += b - a;
            batched += c - b;
        }
        int n = batches.size() * 1000;
        System.out.printf("SeatDecider micro-timing (information only): %s built in %.1f ms; %d requests until %d of %d"
                        + " seats are taken: decide %.2f µs/request, decideAll %.2f µs/request%n", layout,
                built / 1e6, n, layout.size() - all.cardinality(), layout.size(), single / 1e3 / n, batched / 1e3 / n);
        assertThat(all).isEqualTo(one);
    }
}
