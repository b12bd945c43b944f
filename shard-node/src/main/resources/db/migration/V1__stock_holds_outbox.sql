-- lastunit shard schema, version 1: items, escrow buckets, holds, buyer usage, restocks, outbox.
-- Every rule that must never break is a constraint here, so a bug in the engine fails a
-- commit instead of overselling.

CREATE TABLE items (
    tenant_id        text        NOT NULL,
    item_id          text        NOT NULL,
    kind             text        NOT NULL DEFAULT 'COUNTED' CHECK (kind IN ('COUNTED', 'SEATED')),
    home_region      text        NOT NULL,
    total            bigint      NOT NULL CHECK (total >= 0),
    initial_total    bigint      NOT NULL CHECK (initial_total >= 0),  -- as created, for idempotent CreateItem
    per_buyer_limit  integer     NOT NULL CHECK (per_buyer_limit >= 0),   -- 0 = no limit
    hold_ttl_ms      bigint      NOT NULL CHECK (hold_ttl_ms > 0),
    extend_by_ms     bigint      NOT NULL CHECK (extend_by_ms > 0),
    bucket_count     integer     NOT NULL CHECK (bucket_count > 0),
    state            text        NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'PAUSED', 'FROZEN', 'MOVED')),
    collapsed        boolean     NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, item_id)
);

-- A slice of one item's stock, written by exactly one lane. The CHECK makes an oversold
-- (available < 0) or leaked (units neither available, held nor sold) bucket impossible to commit.
CREATE TABLE buckets (
    tenant_id  text    NOT NULL,
    item_id    text    NOT NULL,
    bucket_no  integer NOT NULL CHECK (bucket_no >= 0),
    allotment  bigint  NOT NULL,
    available  bigint  NOT NULL,
    held       bigint  NOT NULL,
    sold       bigint  NOT NULL,
    open       boolean NOT NULL DEFAULT true,
    PRIMARY KEY (tenant_id, item_id, bucket_no),
    FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, item_id),
    CONSTRAINT bucket_balanced CHECK (available >= 0 AND held >= 0 AND sold >= 0
                                      AND available + held + sold = allotment)
);

CREATE TABLE holds (
    hold_id             uuid        PRIMARY KEY,            -- version 7: time-ordered
    tenant_id           text        NOT NULL,
    item_id             text        NOT NULL,
    bucket_no           integer     NOT NULL,
    region              text        NOT NULL,
    qty                 integer     NOT NULL CHECK (qty > 0),
    buyer_id            text        NOT NULL,
    idempotency_key     text        NOT NULL,
    request_fingerprint text        NOT NULL,               -- what the key was first used for
    state               text        NOT NULL CHECK (state IN ('HELD', 'SOLD', 'RELEASED', 'EXPIRED', 'FORWARDED')),
    created_at          timestamptz NOT NULL,
    expires_at          timestamptz NOT NULL,
    extended            boolean     NOT NULL DEFAULT false,
    order_ref           text,
    ended_at            timestamptz,
    CONSTRAINT holds_key_unique UNIQUE (tenant_id, idempotency_key),
    CONSTRAINT holds_sold_has_order CHECK (state <> 'SOLD' OR order_ref IS NOT NULL)
);

-- What is due in a bucket, and its earliest expiry: one index probe for the sweeper and
-- for a lane deciding whether to sweep before it answers SOLD_OUT.
CREATE INDEX holds_bucket_due ON holds (tenant_id, item_id, bucket_no, expires_at) WHERE state = 'HELD';

-- Units a buyer holds or bought of a limited item (per_buyer_limit > 0), changed in the
-- same transaction as the hold.
CREATE TABLE buyer_usage (
    tenant_id  text   NOT NULL,
    item_id    text   NOT NULL,
    buyer_id   text   NOT NULL,
    qty        bigint NOT NULL CHECK (qty >= 0),
    PRIMARY KEY (tenant_id, item_id, buyer_id)
);

-- Applied restocks, so a retried Restock adds nothing twice.
CREATE TABLE restocks (
    tenant_id   text        NOT NULL,
    restock_id  text        NOT NULL,
    item_id     text        NOT NULL,
    qty         bigint      NOT NULL CHECK (qty > 0),
    applied_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, restock_id)
);

-- One event per state change, in the same transaction, for change data capture.
CREATE TABLE outbox (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id   text        NOT NULL,
    item_id     text        NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('CREATED', 'HELD', 'SOLD', 'RELEASED', 'EXPIRED',
                                                     'EXTENDED', 'RESTOCKED', 'TRANSFERRED')),
    hold_id     uuid,
    qty         bigint      NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
