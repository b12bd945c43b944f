-- lastunit shard schema, version 11: retention (docs/operations.md, "Retention").
--
-- The node deletes holds that ended longer ago than retention-holds-after-ms and DONE OUT
-- transfer records completed longer ago than retention-transfers-after-ms, in small batches on
-- a thread of its own. The invariants still count what those rows counted: each batch adds the
-- rows it deleted to these totals in the same statement, and the invariant check, a tenant move's
-- summaries and ListLevels add the totals to the rows that remain.
--
--   retired_hold_totals      per bucket: holds deleted, and the units of the SOLD ones among them
--                            (bucket.sold = the units of its SOLD holds + sold_qty)
--   retired_usage_totals     per buyer of a limited item (per_buyer_limit > 0): units of its SOLD
--                            holds deleted (buyer_usage.qty = its HELD and SOLD holds + qty)
--   retired_transfer_totals  per item: OUT records deleted and their units (the shard's ledger:
--                            total + in - out - out_qty = the buckets' allotment)
--
-- Only the retention thread writes them, besides a tenant move's import (which copies them with
-- the tenant's other rows) and its drop. No lane reads or writes them: a sale never waits for one.
-- No foreign key, like holds and buyer_usage: DropTenant deletes them before the item.
CREATE TABLE retired_hold_totals (
    tenant_id  text    NOT NULL,
    item_id    text    NOT NULL,
    bucket_no  integer NOT NULL,
    holds      bigint  NOT NULL CHECK (holds > 0),
    sold_qty   bigint  NOT NULL CHECK (sold_qty >= 0),
    PRIMARY KEY (tenant_id, item_id, bucket_no)
);

CREATE TABLE retired_usage_totals (
    tenant_id  text   NOT NULL,
    item_id    text   NOT NULL,
    buyer_id   text   NOT NULL,
    qty        bigint NOT NULL CHECK (qty > 0),
    PRIMARY KEY (tenant_id, item_id, buyer_id)
);

CREATE TABLE retired_transfer_totals (
    tenant_id    text   NOT NULL,
    item_id      text   NOT NULL,
    out_records  bigint NOT NULL CHECK (out_records > 0),
    out_qty      bigint NOT NULL CHECK (out_qty > 0),
    PRIMARY KEY (tenant_id, item_id)
);

-- A tenant's DONE OUT records by completion time: what retention deletes, oldest first, without
-- reading the IN records it keeps (transfers_done leads with done_at and holds both directions, so
-- a scan of it would pass every kept IN record on each batch). Only transfer steps write
-- transfers, far fewer than Reserves; an OUT record enters this index once, when step 3 sets done_at.
CREATE INDEX IF NOT EXISTS transfers_out_done ON transfers (tenant_id, done_at)
    WHERE direction = 'OUT' AND done_at IS NOT NULL;

-- The items a tenant move fences, by tenant: retention asks before each batch whether the tenant has
-- one, with one probe instead of reading every item of the tenant. Items change state only in a
-- move; an ACTIVE item is not in the index, so CreateItem and Restock add no entry.
CREATE INDEX IF NOT EXISTS items_fenced ON items (tenant_id) WHERE state IN ('FROZEN', 'IMPORTING', 'MOVED');
