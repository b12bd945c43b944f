package io.lastunit.admin.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.inventory.v1.GetSeatMapResponse;
import io.lastunit.api.inventory.v1.RowStates;
import io.lastunit.api.inventory.v1.Stock;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The seat demo's own checks and its drawing, on made-up answers: each kind of wrong answer is named. */
class SeatAuditTest {
    /** One row of 10 seats A1-1..A1-10, an aisle after 5. */
    private static final Venue VENUE = Venue.of(1, 1, 10);

    private static SeatSale.Hold hold(String buyer, SeatSale.Fate fate, long reservedAt, long releaseSentAt,
            String... seats) {
        SeatSale.Plan plan = switch (fate) {
            case SOLD -> SeatSale.Plan.CONFIRM;
            case RELEASED -> SeatSale.Plan.RELEASE;
            default -> SeatSale.Plan.KEEP;
        };
        return new SeatSale.Hold(buyer, seats.length, "h-" + buyer, List.of(seats), plan, fate, reservedAt,
                releaseSentAt);
    }

    private static SeatSale.Result sale(SeatSale.Hold... holds) {
        return new SeatSale.Result(holds.length, 0, 0, 0, 0, 1, List.of(holds), List.of());
    }

    /** The map of the row, from its compact states ('|' after seat 5). */
    private static GetSeatMapResponse map(String states) {
        RowStates.Builder r = RowStates.newBuilder().setSectionId("A").setRowId("1").setStates(states);
        for (int n = 1; n <= 10; n++) {
            r.addSeatIds("A1-" + n);
        }
        long sold = states.chars().filter(c -> c == 's').count();
        long held = states.chars().filter(c -> c == 'h').count();
        long free = states.chars().filter(c -> c == '.').count();
        return GetSeatMapResponse.newBuilder().addRows(r).setSold(sold).setHeld(held).setFree(free)
                .setStock(Stock.newBuilder().setTotal(10).setSold(sold).setHeld(held).setAvailable(free)).build();
    }

    @Test
    void whatTheBuyersDid_isTheMap_andASeatReleasedBeforeItWasTakenAgainIsFine() {
        SeatAudit.Report r = SeatAudit.check(VENUE, sale(
                hold("b0", SeatSale.Fate.SOLD, 1, Long.MAX_VALUE, "A1-1", "A1-2"),
                hold("b1", SeatSale.Fate.RELEASED, 2, 5, "A1-3", "A1-4"),
                hold("b2", SeatSale.Fate.HELD, 10, Long.MAX_VALUE, "A1-4", "A1-5"),
                hold("b3", SeatSale.Fate.SOLD, 3, Long.MAX_VALUE, "A1-8", "A1-9", "A1-10")),
                map("ss.hh|..sss"));
        assertThat(r.problems()).isEmpty();
        assertThat(List.of(r.sold(), r.held(), r.free(), r.killed())).containsExactly(5L, 2L, 3L, 0L);
    }

    @Test
    void aSeatInTwoHoldsAtOnce_aHoldAcrossTheAisle_andAMapThatDisagrees_areNamed() {
        SeatAudit.Report r = SeatAudit.check(VENUE, sale(
                hold("b0", SeatSale.Fate.SOLD, 1, Long.MAX_VALUE, "A1-1", "A1-2"),
                // b2 got A1-2 though b0 never let it go, and A1-3 before b1's Release was sent.
                hold("b1", SeatSale.Fate.RELEASED, 2, 20, "A1-3"),
                hold("b2", SeatSale.Fate.HELD, 10, Long.MAX_VALUE, "A1-2", "A1-3"),
                hold("b3", SeatSale.Fate.HELD, 3, Long.MAX_VALUE, "A1-5", "A1-6"),
                hold("b4", SeatSale.Fate.HELD, 4, Long.MAX_VALUE, "A1-8", "A1-10")),
                map("ss.s.|h....")); // A1-4 sold though nobody had it; A1-5 free though b3 holds it
        assertThat(r.problems()).anySatisfy(p -> assertThat(p).startsWith("seat A1-2 is in two holds at once"))
                .anySatisfy(p -> assertThat(p).startsWith("seat A1-3 is in two holds at once: b1's"))
                .anySatisfy(p -> assertThat(p).contains("b3", "across the aisle after seat 5"))
                .anySatisfy(p -> assertThat(p).contains("b4", "a gap between seats 8 and 10"))
                .anySatisfy(p -> assertThat(p).isEqualTo("seat A1-5 is free on the map; by the buyers' answers it is held"))
                .anySatisfy(p -> assertThat(p).isEqualTo("seat A1-4 is sold on the map; by the buyers' answers it is free"));
        assertThat(r.ok()).isFalse();
    }

    @Test
    void theDrawing_hasTheStage_aHeaderPerSection_andOneLinePerRow() {
        RowStates a1 = RowStates.newBuilder().setSectionId("A").setRowId("1").setStates("sh.x.|..s..").build();
        RowStates a2 = RowStates.newBuilder().setSectionId("A").setRowId("12").setStates(".....|.....").build();
        RowStates b1 = RowStates.newBuilder().setSectionId("B").setRowId("1").setStates("sssss|sssss").build();
        List<String> lines = SeatMapDrawing.draw(List.of(a1, a2, b1), "  ");
        assertThat(lines).containsExactly(
                "          == STAGE ==",
                "",
                "  section A   sold 2  held 1  free 16  off sale 1",
                "  row 1   #o.x. ..#..",
                "  row 12  ..... .....",
                "",
                "  section B   sold 10  held 0  free 0",
                "  row 1   ##### #####");
    }
}
