package io.lastunit.common.invariant;

import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsResponse;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferDirection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Makes one check exact although the shards are read at different moments (DESIGN §7). Each
 * shard answers ListLevels with its levels and its transfer records from one snapshot: every
 * PENDING record and every record created or completed at or after the snapshot's window start
 * ({@code transfers_since_ms}, the shard's own clock). A record and the allotment it changed are
 * therefore seen together or not at all, and the matcher only has to know, for each transfer,
 * whether the source's snapshot holds its OUT record and the target's snapshot its IN record
 * ({@link PendingTransfer}).
 *
 * <p>A record a snapshot listed is in it. A record it did not list is in it only if it was
 * created before that snapshot's window: everything newer that the snapshot saw was listed. The
 * matcher asks a shard by id ({@link Lookup}, ListTransfers) for the side of a transfer that its
 * snapshot did not list, and reads the answer's creation time against that same shard's window
 * start, so no two clocks are ever compared. A transfer neither snapshot listed is counted on
 * both sides or on neither, which holds when:
 * <ul>
 *   <li>the snapshots were taken less than one window apart (real time), so that no step can
 *       fall between them and still be older than the later one's window: the caller bounds it;
 *   <li>a transfer step's transaction lasts less than the window (seconds against 30 s), so that
 *       a record created before a window had committed when the snapshot was taken.
 * </ul>
 *
 * <p>An IN record counts only against its OUT record: same id, on the shard the OUT names, naming
 * the OUT's shard as its source, for the same item. The pair is counted with the OUT's quantity,
 * so an IN with another quantity, an IN on the wrong shard or an IN without an OUT shows as a
 * drift of its units.
 *
 * <p>Stateless; one {@link #match} call per check and cell, on the caller's thread.
 */
public final class TransferMatcher {

    /** Records (any direction) of one shard by id. */
    @FunctionalInterface
    public interface Lookup {
        /** @throws LookupFailed when the shard could not be asked, with the reason */
        List<Transfer> find(String shardId, List<String> transferIds) throws LookupFailed, InterruptedException;
    }

    /** A shard could not be asked; the message says which and why. */
    public static final class LookupFailed extends Exception {
        private static final long serialVersionUID = 1L;

        public LookupFailed(String reason) {
            super(reason, null, false, false);
        }
    }

    /** The balances of a cell's items, or the reasons it could not be judged. */
    public record Result(List<ItemBalance> balances, List<String> problems) {
        public Result {
            balances = List.copyOf(balances);
            problems = List.copyOf(problems);
        }
    }

    private record Seen(String shard, Transfer record, boolean inSnapshot) {
    }

    private TransferMatcher() {
    }

    /**
     * @param snapshots ListLevels answers with transfer records, one per shard of the cell
     * @param inScope   tenants of the cell (items and records of others are ignored)
     * @param lookup    records by id on one shard, for the sides the snapshots did not list
     */
    public static Result match(Collection<ListLevelsResponse> snapshots, Predicate<String> inScope, Lookup lookup)
            throws InterruptedException {
        List<String> problems = new ArrayList<>();
        Map<String, ListLevelsResponse> byShard = new LinkedHashMap<>();
        for (ListLevelsResponse s : snapshots) {
            if (s.getTransfersSinceMs() <= 0) {
                problems.add("shard " + s.getShardId() + " answered ListLevels without a transfer snapshot"
                        + " (a node older than the exact check)");
            } else if (s.getTransfersTruncated()) {
                problems.add("shard " + s.getShardId() + " has more transfer records in its window than one"
                        + " answer lists (" + s.getTransfersCount() + ")");
            }
            byShard.put(s.getShardId(), s);
        }
        if (!problems.isEmpty()) {
            return new Result(List.of(), problems);
        }
        Map<String, Seen> outs = new LinkedHashMap<>();
        Map<String, List<Seen>> ins = new LinkedHashMap<>();
        for (ListLevelsResponse s : byShard.values()) {
            for (Transfer t : s.getTransfersList()) {
                if (!inScope.test(t.getTenantId())) {
                    continue;
                }
                Seen seen = new Seen(s.getShardId(), t, true);
                if (t.getDirection() == TransferDirection.OUT) {
                    Seen before = outs.putIfAbsent(t.getTransferId(), seen);
                    if (before != null) {
                        problems.add("transfer " + t.getTransferId() + " has OUT records on shards " + before.shard()
                                + " and " + s.getShardId());
                    }
                } else if (t.getDirection() == TransferDirection.IN) {
                    ins.computeIfAbsent(t.getTransferId(), k -> new ArrayList<>()).add(seen);
                }
            }
        }
        // The OUT side of transfers whose IN record a snapshot listed without the OUT: on the
        // shard the IN names as its source.
        Map<String, Set<String>> askOut = new LinkedHashMap<>();
        for (Map.Entry<String, List<Seen>> e : ins.entrySet()) {
            if (!outs.containsKey(e.getKey())) {
                for (Seen in : e.getValue()) {
                    askOut.computeIfAbsent(in.record().getPeerShardId(), k -> new LinkedHashSet<>()).add(e.getKey());
                }
            }
        }
        for (Seen out : ask(askOut, TransferDirection.OUT, byShard, lookup, problems)) {
            if (inScope.test(out.record().getTenantId())) { // an IN naming another tenant's transfer drifts
                outs.putIfAbsent(out.record().getTransferId(), out);
            }
        }
        // The IN side at each OUT's target, unless that target's snapshot listed it.
        Map<String, Set<String>> askIn = new LinkedHashMap<>();
        Map<String, Seen> inAtTarget = new LinkedHashMap<>();
        for (Seen out : outs.values()) {
            String id = out.record().getTransferId();
            String target = out.record().getPeerShardId();
            Seen listed = ins.getOrDefault(id, List.of()).stream().filter(in -> in.shard().equals(target))
                    .findFirst().orElse(null);
            if (listed != null) {
                inAtTarget.put(id, listed);
            } else {
                askIn.computeIfAbsent(target, k -> new LinkedHashSet<>()).add(id);
            }
        }
        for (Seen in : ask(askIn, TransferDirection.IN, byShard, lookup, problems)) {
            inAtTarget.putIfAbsent(in.record().getTransferId(), in);
        }
        if (!problems.isEmpty()) {
            return new Result(List.of(), problems);
        }
        List<PendingTransfer> moving = new ArrayList<>();
        for (Seen out : outs.values()) {
            Transfer o = out.record();
            Seen in = inAtTarget.get(o.getTransferId());
            boolean inSeen = in != null && in.inSnapshot() && in.record().getPeerShardId().equals(out.shard())
                    && in.record().getTenantId().equals(o.getTenantId()) && in.record().getItemId().equals(o.getItemId());
            PendingTransfer p = new PendingTransfer(o.getTransferId(), new ItemKey(o.getTenantId(), o.getItemId()),
                    out.shard(), o.getPeerShardId(), o.getQuantity(), out.inSnapshot(), inSeen);
            if (p.inFlight() != 0) {
                moving.add(p);
            }
        }
        List<ItemLevel> levels = new ArrayList<>();
        for (ListLevelsResponse s : byShard.values()) {
            for (ItemLevel l : s.getItemsList()) {
                if (inScope.test(l.getTenantId())) {
                    levels.add(l);
                }
            }
        }
        return new Result(CrossShardInvariant.balances(levels, moving), List.of());
    }

    /**
     * The records of {@code direction} with the given ids, asked of each shard, each marked
     * in its shard's snapshot when it is older than the snapshot's window (a newer one would
     * have been listed). A shard outside the cell is a problem: the topology does not let it
     * take part in the cell's transfers.
     */
    private static List<Seen> ask(Map<String, Set<String>> idsByShard, TransferDirection direction,
            Map<String, ListLevelsResponse> byShard, Lookup lookup, List<String> problems) throws InterruptedException {
        List<Seen> found = new ArrayList<>();
        for (Map.Entry<String, Set<String>> e : idsByShard.entrySet()) {
            ListLevelsResponse snapshot = byShard.get(e.getKey());
            if (snapshot == null) {
                problems.add("transfers " + e.getValue() + " name shard " + e.getKey()
                        + ", which is not a shard of this cell");
                continue;
            }
            List<String> ids = List.copyOf(e.getValue());
            for (int from = 0; from < ids.size(); from += CrossShardChecker.IDS_PER_CALL_MAX) {
                List<Transfer> answer;
                try {
                    answer = lookup.find(e.getKey(),
                            ids.subList(from, Math.min(ids.size(), from + CrossShardChecker.IDS_PER_CALL_MAX)));
                } catch (LookupFailed f) {
                    problems.add(f.getMessage());
                    continue;
                }
                for (Transfer t : answer) {
                    if (t.getDirection() == direction && e.getValue().contains(t.getTransferId())) {
                        found.add(new Seen(e.getKey(), t, t.getCreatedAtMs() < snapshot.getTransfersSinceMs()));
                    }
                }
            }
        }
        return found;
    }
}
