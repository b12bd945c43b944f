-- lastunit shard schema, version 12: seated items (docs/seats.md).
--
-- A SEATED item sells named seats. Its one bucket (bucket 0) counts them as a counted item's
-- bucket counts units (allotment = seats on sale, available + held + sold = allotment), and each
-- seat is a row here. A seat is in a hold while hold_id names it: the lane that owns the item
-- claims seats with a conditional update (hold_id IS NULL AND on_sale), so two holds can never
-- name one seat, and a claim that matches fewer rows than the lane decided tells it its view was
-- stale. Releasing or expiring a hold clears hold_id; a SOLD seat keeps it for good.
CREATE TABLE seats (
    tenant_id    text    NOT NULL,
    item_id      text    NOT NULL,
    seat_no      integer NOT NULL CHECK (seat_no >= 0),   -- stable number, assigned at creation or restock
    seat_id      text    NOT NULL,
    section_id   text    NOT NULL,
    row_id       text    NOT NULL,
    position     integer NOT NULL CHECK (position >= 0),  -- the seat's order within its row
    category     text    NOT NULL DEFAULT '',
    rank         integer NOT NULL DEFAULT 0 CHECK (rank >= 0),
    aisle_after  boolean NOT NULL DEFAULT false,
    on_sale      boolean NOT NULL DEFAULT true,
    hold_id      uuid,
    PRIMARY KEY (tenant_id, item_id, seat_no),
    CONSTRAINT seats_id_unique UNIQUE (tenant_id, item_id, seat_id),
    CONSTRAINT seats_position_unique UNIQUE (tenant_id, item_id, section_id, row_id, position),
    CONSTRAINT seats_killed_free CHECK (on_sale OR hold_id IS NULL),
    FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, item_id)
) WITH (fillfactor = 50);
-- A sale changes only hold_id (and on_sale), which no index covers: with half of each page left
-- free, claiming a seat and freeing it again are heap-only (HOT) updates that write no index entry.

-- The seats of a seated hold, by seat_no, in the order of the seat map; NULL for counted holds.
ALTER TABLE holds ADD COLUMN seat_nos integer[];
ALTER TABLE holds ADD CONSTRAINT holds_seats_counted CHECK (seat_nos IS NULL OR cardinality(seat_nos) = qty);

-- What a repeated CreateItem of a seated item is compared with: a digest of its seat map.
ALTER TABLE items ADD COLUMN seat_map_digest text;

-- Seats taken off sale and put back.
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('CREATED', 'HELD', 'SOLD', 'RELEASED', 'EXPIRED',
    'EXTENDED', 'RESTOCKED', 'TRANSFERRED', 'SEATS_OFF_SALE', 'SEATS_ON_SALE'));
