-- lastunit shard schema, version 2: items sold in several regions, and the durable records
-- of the demarcation protocol (DESIGN §7).
--
-- items.total is this shard's base for the item: the quota it was created with here plus the
-- restocks applied here. The item's total over every region is the sum of the bases; the
-- shard's own ledger is  sum(buckets.allotment) = total + transferred in - transferred out.

ALTER TABLE items
    ADD COLUMN regions       text[] NOT NULL DEFAULT '{}',   -- every region the item is sold in
    ADD COLUMN created_total bigint NOT NULL DEFAULT 0;      -- the request's total, for idempotent CreateItem

CREATE TABLE transfers (
    transfer_id  text        NOT NULL,
    direction    text        NOT NULL CHECK (direction IN ('OUT', 'IN')),
    tenant_id    text        NOT NULL,
    item_id      text        NOT NULL,
    peer         text        NOT NULL,      -- the target shard of an OUT, the source of an IN
    qty          bigint      NOT NULL CHECK (qty > 0),
    state        text        NOT NULL CHECK (state IN ('PENDING', 'DONE')),
    collapse     boolean     NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    done_at      timestamptz,
    PRIMARY KEY (transfer_id, direction),
    FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, item_id),
    CONSTRAINT transfer_in_done CHECK (direction = 'OUT' OR state = 'DONE')
);

-- What a new balancer leader must finish first.
CREATE INDEX transfers_pending ON transfers (created_at) WHERE state = 'PENDING';
CREATE INDEX transfers_item ON transfers (tenant_id, item_id);
