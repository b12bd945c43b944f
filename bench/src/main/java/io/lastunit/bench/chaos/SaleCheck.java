package io.lastunit.bench.chaos;

import io.lastunit.common.HoldId;
import io.lastunit.testkit.faults.History;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The checker of a chaos run, over the answers the clients got (every unknown resolved by then)
 * and the holds the shards' databases have, read past every proxy from the server that takes
 * writes: an acknowledged hold the database does not have under the id the client was told is
 * lost; holds of an item beyond its units are oversold; and the sale is exact when each item has
 * min(units, buyers sent) holds, every one of them told RESERVED, all HELD. {@link #judge} decides
 * from values alone.
 */
final class SaleCheck {
    /** One hold in a database. */
    record Hold(String key, int item, String uuid, String state) {
    }

    /** What the check found. */
    record Result(long lost, Set<String> lostKeys, long oversold, long holdsInDatabase, long expected,
                  long toldReserved, long heldButToldSoldOut, long notHeld, long duplicateKeys, List<String> problems) {
        boolean exact() {
            return problems.isEmpty();
        }
    }

    /** At most this many problems are named one by one. */
    static final int PROBLEMS_LISTED_MAX = 20;

    private SaleCheck() {
    }

    static Result check(ChaosPlatform platform, List<History.Entry> entries, Map<String, ChaosSale.Answer> answers,
                        Map<Integer, Long> sentPerItem, long unitsPerItem) throws SQLException {
        List<Hold> holds = new ArrayList<>();
        for (String shard : platform.shardIds()) {
            holds.addAll(holdsOf(platform.directJdbcUrl(shard), platform.databaseUser()));
        }
        return judge(entries, answers, holds, sentPerItem, unitsPerItem);
    }

    private static List<Hold> holdsOf(String url, String user) throws SQLException {
        List<Hold> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url, user, "");
             PreparedStatement ps = c.prepareStatement("SELECT idempotency_key, item_id, hold_id::text, state"
                     + " FROM holds WHERE tenant_id = ? AND qty > 0")) {
            ps.setString(1, ChaosPlatform.TENANT);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Hold(rs.getString(1), Integer.parseInt(rs.getString(2).substring("item-".length())),
                            rs.getString(3), rs.getString(4)));
                }
            }
        }
        return out;
    }

    static Result judge(List<History.Entry> entries, Map<String, ChaosSale.Answer> answers, List<Hold> holds,
                        Map<Integer, Long> sentPerItem, long unitsPerItem) {
        List<String> problems = new ArrayList<>();
        Map<String, Hold> byKey = new HashMap<>();
        long duplicates = 0;
        for (Hold h : holds) {
            if (byKey.put(h.key(), h) != null) {
                duplicates++;
                note(problems, "key " + h.key() + " has two holds");
            }
        }
        // Told RESERVED: during the sale (the history) or by the retry that resolved an unknown.
        Map<String, String> told = new HashMap<>();
        for (History.Entry e : entries) {
            if (e.outcome() == History.Outcome.OK) {
                told.put(e.key(), (String) e.value());
            }
        }
        answers.values().stream().filter(ChaosSale.Answer::reserved).forEach(a -> told.putIfAbsent(a.key(), a.holdId()));
        Set<String> lost = new HashSet<>();
        told.forEach((key, id) -> {
            String uuid = HoldId.decode(id, "hold_id").uuid().toString();
            Hold h = byKey.get(key);
            if (h == null || !uuid.equals(h.uuid())) {
                lost.add(key);
                note(problems, "LOST " + key + ": told hold " + uuid + ", the database has "
                        + (h == null ? "none" : h.uuid()));
            }
        });
        long notHeld = 0;
        long heldButToldSoldOut = 0;
        Map<Integer, Long> perItem = new HashMap<>();
        for (Hold h : byKey.values()) {
            perItem.merge(h.item(), 1L, Long::sum);
            if (!"HELD".equals(h.state())) {
                notHeld++;
                note(problems, "hold of " + h.key() + " is " + h.state() + ", not HELD");
            }
            if (!told.containsKey(h.key())) {
                heldButToldSoldOut++;
                note(problems, "key " + h.key() + " holds " + h.uuid() + " but was never told RESERVED");
            }
        }
        long oversold = 0;
        long expected = 0;
        for (Map.Entry<Integer, Long> s : sentPerItem.entrySet()) {
            long have = perItem.getOrDefault(s.getKey(), 0L);
            long want = Math.min(unitsPerItem, s.getValue());
            expected += want;
            oversold += Math.max(0, have - unitsPerItem);
            if (have != want) {
                note(problems, ChaosSale.itemId(s.getKey()) + ": " + have + " holds, expected " + want + " (units "
                        + unitsPerItem + ", buyers " + s.getValue() + ")");
            }
        }
        return new Result(lost.size(), Set.copyOf(lost), oversold, byKey.size(), expected, told.size(),
                heldButToldSoldOut, notHeld, duplicates, List.copyOf(problems));
    }

    private static void note(List<String> problems, String p) {
        if (problems.size() < PROBLEMS_LISTED_MAX) {
            problems.add(p);
        } else if (problems.size() == PROBLEMS_LISTED_MAX) {
            problems.add("... (more)");
        }
    }
}
