package io.lastunit.shard.seats;

import io.lastunit.api.inventory.v1.Seat;
import io.lastunit.api.inventory.v1.SeatMap;
import io.lastunit.api.inventory.v1.SeatRow;
import io.lastunit.api.inventory.v1.SeatSection;
import io.lastunit.common.SeatRules;
import io.lastunit.shard.seats.plan.SeatSpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A seat map as the API gives it (checked in shape by {@link SeatRules}) turned into the seats
 * the shard stores: numbered rows spelled out, each seat's category and rank from its row where it
 * names none, seat numbers assigned from {@code firstSeatNo} in map order. Pure.
 */
public final class SeatMaps {
    private SeatMaps() {
    }

    /** The seats of {@code map}, numbered from {@code firstSeatNo}. */
    public static List<SeatSpec> specs(SeatMap map, int firstSeatNo) {
        List<SeatSpec> out = new ArrayList<>(SeatRules.seatCount(map));
        int no = firstSeatNo;
        for (SeatSection s : map.getSectionsList()) {
            for (SeatRow r : s.getRowsList()) {
                if (r.getSeatsCount() == 0) {
                    Set<Integer> aisles = new HashSet<>(r.getAislesAfterList());
                    for (int n = r.getFirstNumber(); n < r.getFirstNumber() + r.getCount(); n++) {
                        out.add(new SeatSpec(no++, SeatRules.numberedId(r, n), s.getSectionId(), r.getRowId(), n,
                                r.getCategory(), r.getRank(), aisles.contains(n)));
                    }
                } else {
                    for (Seat seat : r.getSeatsList()) {
                        out.add(new SeatSpec(no++, seat.getSeatId(), s.getSectionId(), r.getRowId(), seat.getOrder(),
                                seat.getCategory().isEmpty() ? r.getCategory() : seat.getCategory(),
                                seat.getRank() != 0 ? seat.getRank() : r.getRank(), seat.getAisleAfter()));
                    }
                }
            }
        }
        return out;
    }

    /**
     * What a repeated CreateItem is compared with: a digest of the seats as stored (ids, places,
     * categories, ranks, aisles), so the same map written two ways (numbered or listed) is the same.
     */
    public static String digest(List<SeatSpec> seats) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            for (SeatSpec s : seats) {
                String line = s.seatId() + '\0' + s.sectionId() + '\0' + s.rowId() + '\0' + s.order() + '\0'
                        + s.category() + '\0' + s.rank() + '\0' + s.aisleAfter() + '\n';
                d.update(line.getBytes(StandardCharsets.US_ASCII));
            }
            return Base64.getEncoder().withoutPadding().encodeToString(d.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
