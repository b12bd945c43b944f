-- lastunit shard schema, version 7: an idempotency key names one Reserve of one item.
--
-- The key's scope is (tenant, item): the same key on two items names two Reserves, wherever
-- the items live, and within an item a key names one hold in every region. The unique
-- constraint follows the scope, so it is the same rule on every shard.
ALTER TABLE holds DROP CONSTRAINT holds_key_unique;
ALTER TABLE holds ADD CONSTRAINT holds_key_unique UNIQUE (tenant_id, item_id, idempotency_key);

-- CLAIMED: at the home region's shard of an item sold in several regions, the record that a
-- key of the item was used for a hold placed in another region (the row's region). It holds no
-- units and never changes, like FORWARDED.
ALTER TABLE holds DROP CONSTRAINT holds_state_check;
ALTER TABLE holds ADD CONSTRAINT holds_state_check
    CHECK (state IN ('HELD', 'SOLD', 'RELEASED', 'EXPIRED', 'FORWARDED', 'CLAIMED'));

-- A restock id names one restock of one item in the region its shard serves, by the same rule:
-- the same id on another item is another restock, wherever the two items live.
ALTER TABLE restocks DROP CONSTRAINT restocks_pkey;
ALTER TABLE restocks ADD PRIMARY KEY (tenant_id, item_id, restock_id);
