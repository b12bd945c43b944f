package io.lastunit.shard.decide;

/**
 * The state column of a {@code holds} row. HELD, SOLD, RELEASED and EXPIRED are holds; FORWARDED
 * and CLAIMED record a key's use that holds no units here (a Reserve forwarded to the item's home
 * region; a key claimed at the home region for another region's hold).
 */
public enum RowState {
    HELD, SOLD, RELEASED, EXPIRED, FORWARDED, CLAIMED;

    public static RowState of(String column) {
        return valueOf(column);
    }
}
