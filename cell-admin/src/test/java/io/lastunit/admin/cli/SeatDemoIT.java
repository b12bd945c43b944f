package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.demo.SeatMapDrawing;
import io.lastunit.admin.demo.SeatSale;
import io.lastunit.admin.demo.Venue;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetSeatMapRequest;
import io.lastunit.api.inventory.v1.GetSeatMapResponse;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ItemKind;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.SeatMode;
import io.lastunit.api.inventory.v1.SeatSelection;
import io.lastunit.api.inventory.v1.SetSeatsOnSaleRequest;
import io.lastunit.api.inventory.v1.SetSeatsOnSaleResponse;
import io.lastunit.common.GrpcErrors;
import io.lastunit.shard.ShardConfig;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code ./lastunit demo --seats} on a smaller platform of the same shape (cell shared and cell
 * dedicated, a router) and a smaller sale — 3,000 buyers for 300 seats — all through the router:
 * the counts are exact, sold is what the buyers confirmed, no seat is in two holds, every hold is
 * adjacent, the invariant check passes, and the drawing has one line per row. Then, through the
 * router too: a free seat taken off sale is answered SEATS_TAKEN, an unknown seat id
 * INVALID_ARGUMENT naming {@code seats.seat_ids}.
 */
class SeatDemoIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int SECTIONS = 3;
    private static final int ROWS = 4;
    private static final int SEATS_PER_ROW = 25;
    private static final int BUYERS = 3_000;

    private static LocalPlatform platform;
    private static ManagedChannel router;

    @BeforeAll
    static void start() throws Exception {
        platform = LocalPlatform.builder(id -> new ShardConfig.Jdbc(PG.newDatabase(id), PG.user(), PG.password(), 0))
                .cell("shared", List.of(DemoCommand.REGION), 2)
                .cell(DemoCommand.DEDICATED_CELL, List.of(DemoCommand.REGION), 1).start();
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
        router = NettyChannelBuilder.forAddress("127.0.0.1", platform.routerPort()).usePlaintext()
                .intercept(MetadataUtils.newAttachHeadersInterceptor(md)).build();
    }

    @AfterAll
    static void stop() throws Exception {
        if (router != null) {
            router.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (platform != null) {
            platform.close();
        }
    }

    private static InventoryServiceGrpc.InventoryServiceBlockingStub stub() {
        return InventoryServiceGrpc.newBlockingStub(router)
                .withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void seatDemo_throughTheRouter_exactCounts_noSeatTwice_holdsAdjacent_invariantOK_oneLinePerRow() {
        Venue venue = Venue.of(SECTIONS, ROWS, SEATS_PER_ROW);
        assertThat(venue.total()).isEqualTo(300);
        assertThat(venue.aisleAfter()).isEqualTo(12);
        StringWriter text = new StringWriter();
        PrintWriter out = new PrintWriter(text, true);
        Closer closer = new Closer();
        DemoCommand.SeatRun run;
        try {
            run = assertTimeoutPreemptively(TestTimeouts.scaled(Duration.ofMinutes(5)), () -> DemoCommand.seatDemo(
                    platform, closer, new DemoCommand.SeatPlan(venue, DemoCommand.SEAT_TENANT,
                            DemoCommand.DEDICATED_CELL, BUYERS, 64, 26L, "it", false, false), out));
        } finally {
            closer.close();
        }
        run.printEnd(out);
        String output = text.toString();
        System.out.println(output);
        SeatSale.Result sale = run.sale();

        // Every buyer answered, none failed; some confirmed, some released, some kept their hold.
        assertThat(sale.buyers()).isEqualTo(BUYERS);
        assertThat(sale.errors()).as(String.join("\n", sale.errorSamples())).isZero();
        assertThat(sale.holdsWith(SeatSale.Fate.UNKNOWN)).isZero();
        assertThat(sale.holdsWith(SeatSale.Fate.SOLD)).isPositive();
        assertThat(sale.holdsWith(SeatSale.Fate.HELD)).isPositive();
        assertThat(sale.holds().stream().filter(h -> h.plan() == SeatSale.Plan.RELEASE)).isNotEmpty()
                .allSatisfy(h -> assertThat(h.fate()).isEqualTo(SeatSale.Fate.RELEASED));
        List<SeatSale.Hold> late = sale.holds().stream().filter(h -> h.plan() == SeatSale.Plan.RELEASE_LATE).toList();
        assertThat(late).isNotEmpty().allSatisfy(h -> assertThat(h.fate()).isEqualTo(SeatSale.Fate.RELEASED));
        assertThat(sale.soldOut() + sale.holds().size()).isEqualTo(BUYERS);

        // Exact counts: sold + held + free = the seats; sold and held are what the buyers recorded.
        var audit = run.audit();
        assertThat(audit.problems()).isEmpty();
        assertThat(audit.killed()).isZero();
        assertThat(audit.sold() + audit.held() + audit.free()).isEqualTo(venue.total());
        assertThat(audit.sold()).isEqualTo(sale.seatsWith(SeatSale.Fate.SOLD));
        assertThat(audit.held()).isEqualTo(sale.seatsWith(SeatSale.Fate.HELD));
        // Seats released at closing are free on the map (nobody asked after them).
        assertThat(audit.free()).isGreaterThanOrEqualTo(late.stream().mapToLong(h -> h.seats().size()).sum())
                .isPositive();
        GetSeatMapResponse map = run.map();
        assertThat(map.getStock().getTotal()).isEqualTo(venue.total());
        assertThat(map.getStock().getSold()).isEqualTo(audit.sold());
        assertThat(map.getStock().getHeld()).isEqualTo(audit.held());
        assertThat(map.getStock().getAvailable()).isEqualTo(audit.free());

        // Checked here too, from the buyers' answers alone: no seat in two holds that are still
        // live, no seat re-taken before its first hold was released, every hold adjacent in one row.
        Map<String, SeatSale.Hold> live = new HashMap<>();
        Map<String, List<SeatSale.Hold>> all = new HashMap<>();
        for (SeatSale.Hold h : sale.holds()) {
            assertAdjacentInOneRow(h);
            for (String seat : h.seats()) {
                all.computeIfAbsent(seat, s -> new ArrayList<>()).add(h);
                if (h.fate() != SeatSale.Fate.RELEASED) {
                    SeatSale.Hold before = live.put(seat, h);
                    assertThat(before).as("seat %s in two holds: %s and %s", seat, before, h).isNull();
                }
            }
        }
        all.forEach((seat, hs) -> {
            for (SeatSale.Hold a : hs) {
                for (SeatSale.Hold b : hs) {
                    if (a != b && a.reservedAt() < b.reservedAt()) {
                        assertThat(a.releaseSentAt()).as("seat %s held by %s before %s let it go", seat, b.buyer(),
                                a.buyer()).isLessThan(b.reservedAt());
                    }
                }
            }
        });
        long confirmedSeats = sale.holds().stream().filter(h -> h.fate() == SeatSale.Fate.SOLD)
                .mapToLong(h -> h.seats().size()).sum();
        assertThat(audit.sold()).isEqualTo(confirmedSeats);

        // The platform's invariant check, and the script lines.
        assertThat(run.sweep().ok()).as(String.join("\n", run.sweep().problemLines())).isTrue();
        assertThat(run.sweep().shards()).isEqualTo(3);
        assertThat(run.exitCode()).isEqualTo(ExitCodes.OK);
        List<String> lines = output.lines().toList();
        assertThat(lines.get(lines.size() - 1)).isEqualTo("invariant=OK");
        assertThat(lines.get(lines.size() - 2)).isEqualTo("sold=" + audit.sold() + " total=" + venue.total());
        assertThat(lines.get(lines.size() - 3)).isEqualTo(String.format("seats: %,d sold, %,d held, %,d free of %,d",
                audit.sold(), audit.held(), audit.free(), venue.total()));
        assertThat(output).contains("the demo is not the benchmark", SeatMapDrawing.legend());

        // The drawing: one line per row, the seats in order with the aisle, what the map says.
        List<String> rowLines = run.drawing().stream().filter(l -> l.startsWith("  " + SeatMapDrawing.ROW_LABEL))
                .toList();
        assertThat(rowLines).hasSize(SECTIONS * ROWS);
        assertThat(run.drawing().stream().filter(l -> l.startsWith("  section "))).hasSize(SECTIONS);
        assertThat(run.drawing()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(80));
        long sold = 0;
        long held = 0;
        long free = 0;
        for (int i = 0; i < rowLines.size(); i++) {
            String l = rowLines.get(i);
            assertThat(l).startsWith(String.format("  row %-1s  ", Venue.rowId(i % ROWS)));
            String seats = l.substring(l.length() - (SEATS_PER_ROW + 1));
            assertThat(seats.charAt(12)).as(l).isEqualTo(' ');
            assertThat(seats).matches("[#o.]{12} [#o.]{13}");
            sold += seats.chars().filter(c -> c == '#').count();
            held += seats.chars().filter(c -> c == 'o').count();
            free += seats.chars().filter(c -> c == '.').count();
        }
        assertThat(sold).isEqualTo(audit.sold());
        assertThat(held).isEqualTo(audit.held());
        assertThat(free).isEqualTo(audit.free());
        assertThat(output).contains(String.join("\n", run.drawing()));
    }

    /** Seat ids "<section><row>-<n>": one row, consecutive numbers, not across the aisle after 12. */
    private static void assertAdjacentInOneRow(SeatSale.Hold h) {
        assertThat(h.seats()).as("hold of %s", h.buyer()).hasSize(h.asked());
        String row = h.seats().get(0).substring(0, h.seats().get(0).indexOf('-'));
        List<Integer> numbers = new ArrayList<>();
        for (String id : h.seats()) {
            assertThat(id.substring(0, id.indexOf('-'))).as("one row: %s", h.seats()).isEqualTo(row);
            numbers.add(Integer.parseInt(id.substring(id.indexOf('-') + 1)));
        }
        numbers.sort(null);
        for (int k = 1; k < numbers.size(); k++) {
            assertThat(numbers.get(k)).as("adjacent: %s", h.seats()).isEqualTo(numbers.get(k - 1) + 1);
        }
        assertThat(numbers.get(0) <= 12 && numbers.get(numbers.size() - 1) > 12).as("across the aisle: %s", h.seats())
                .isFalse();
    }

    @Test
    void throughTheRouter_aSeatTakenOffSaleIsTaken_andAnUnknownSeatIsBadInput() {
        stub().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("hall")
                .setHomeRegion(DemoCommand.REGION).setKind(ItemKind.SEATED).setSeatMap(Venue.of(1, 2, 10).seatMap())
                .build());
        SetSeatsOnSaleResponse off = stub().setSeatsOnSale(SetSeatsOnSaleRequest.newBuilder().setTenantId("acme")
                .setItemId("hall").addSeatIds("A1-3").setOnSale(false).build());
        assertThat(off.getChanged()).isEqualTo(1);
        assertThat(off.getStock().getKilled()).isEqualTo(1);
        assertThat(off.getStock().getTotal()).isEqualTo(19);

        ReserveResponse taken = stub().reserve(specific("k1", "A1-2", "A1-3"));
        assertThat(taken.getOutcome()).isEqualTo(ReserveOutcome.SEATS_TAKEN);
        assertThat(taken.getTakenSeatIdsList()).containsExactly("A1-3");
        assertThat(taken.hasHold()).isFalse();

        assertThatThrownBy(() -> stub().reserve(specific("k2", "nope")))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap()).containsEntry("field",
                            "seats.seat_ids");
                });

        // Nothing was held; the map shows the seat off sale.
        GetSeatMapResponse map = stub().getSeatMap(GetSeatMapRequest.newBuilder().setTenantId("acme")
                .setItemId("hall").setRegion(DemoCommand.REGION).setCompact(true).build());
        assertThat(map.getHeld()).isZero();
        assertThat(map.getKilled()).isEqualTo(1);
        assertThat(map.getFree()).isEqualTo(19);
        List<String> drawing = SeatMapDrawing.draw(map.getRowsList(), "  ");
        assertThat(drawing).contains("  row 1  ..x.. .....", "  row 2  ..... .....");
        // Back on sale, the seat can be had.
        stub().setSeatsOnSale(SetSeatsOnSaleRequest.newBuilder().setTenantId("acme").setItemId("hall")
                .addSeatIds("A1-3").setOnSale(true).build());
        ReserveResponse got = stub().reserve(specific("k3", "A1-3"));
        assertThat(got.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(got.getHold().getSeatIdsList()).containsExactly("A1-3");
    }

    private static ReserveRequest specific(String key, String... seats) {
        SeatSelection.Builder s = SeatSelection.newBuilder().setMode(SeatMode.SPECIFIC);
        for (String id : seats) {
            s.addSeatIds(id);
        }
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId("hall").setIdempotencyKey(key)
                .setBuyerId("b-" + key).setRegion(DemoCommand.REGION).setSeats(s).build();
    }

    @Test
    void seatOptions_areCheckedBeforeAnythingStarts() {
        CliRun units = CliRun.of("demo", "--seats", "--units", "5", "--rows", "0");
        assertThat(units.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(units.err()).contains("--units does not apply to --seats", "--rows 0 is outside [1, 99]");
        CliRun noSeats = CliRun.of("demo", "--seats-per-row", "10");
        assertThat(noSeats.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(noSeats.err()).contains("--seats-per-row needs --seats");
    }
}
