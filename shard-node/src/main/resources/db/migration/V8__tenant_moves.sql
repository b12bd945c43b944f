-- lastunit shard schema, version 8: what a tenant move needs of a shard (docs/moves.md, "On the
-- shard").
--
-- IMPORTING: an item whose rows a move is copying into this shard. Like FROZEN (the source
-- during the fence) and MOVED (the source after the flip), it serves nothing: no sale, no call on
-- a hold, no expiry, no transfer, until the move activates it.
ALTER TABLE items DROP CONSTRAINT items_state_check;
ALTER TABLE items ADD CONSTRAINT items_state_check
    CHECK (state IN ('ACTIVE', 'PAUSED', 'FROZEN', 'IMPORTING', 'MOVED'));

-- The 64-bit id of the transaction that wrote a row version, from its 32-bit xmin, for a row
-- that snapshot `snap` sees. Such a row's xmin precedes snap's xmax by less than 2^31 (older rows
-- are frozen, and a frozen row is visible to every snapshot whatever its id here), so it belongs to
-- xmax's epoch, or to the one before when its low 32 bits are not below xmax's. Ids below 3
-- (bootstrap, frozen) come out as 0, older than every snapshot.
--
-- A delta export of a move asks, on its own snapshot S, for the rows whose writer a previous
-- export's snapshot P did not see:
--     NOT pg_visible_in_snapshot(lastunit_xid8(xmin, S), P)
-- The epoch must come from S, the snapshot that read the row: a row written after P has an xmin
-- at or past P's xmax, which P's epoch would turn into an old id. Nothing here calls
-- pg_current_xact_id(), which would give a read-only export a transaction id of its own.
--
-- No index is added: every table an export reads (items, buckets, holds, buyer_usage, transfers,
-- restocks) has one that leads with tenant_id, and a row's xmin cannot be indexed. DropTenant's
-- delete of the outbox reads the whole outbox, once per move: an index on it by item would cost
-- every state change a second index insert.
CREATE OR REPLACE FUNCTION lastunit_xid8(x xid, snap pg_snapshot) RETURNS xid8
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE
        WHEN x::text::bigint < 3 THEN '0'::xid8
        WHEN x::text::bigint < pg_snapshot_xmax(snap)::text::bigint % 4294967296
            THEN (pg_snapshot_xmax(snap)::text::bigint - pg_snapshot_xmax(snap)::text::bigint % 4294967296
                  + x::text::bigint)::text::xid8
        ELSE (pg_snapshot_xmax(snap)::text::bigint - pg_snapshot_xmax(snap)::text::bigint % 4294967296
              - 4294967296 + x::text::bigint)::text::xid8
    END
$$;
