-- lastunit shard schema, version 10: the rows of a tenant that can still change, found by index
-- (docs/moves.md, "A pause that does not grow with history").
--
-- A hold changes only while it is HELD; ending it (SOLD, RELEASED, EXPIRED) sets ended_at to the
-- ending transaction's now(), and the key records (FORWARDED, CLAIMED) are written ended. A
-- transfer changes only while it is PENDING; completing it sets done_at. So everything a tenant
-- move's last delta and its fenced verification must read is: the live holds (holds_live), the
-- holds ended since a cut (holds_ended), the transfers PENDING or done since the cut
-- (transfers_pending, transfers_done), and the usage of the buyers of those holds. Rows ended
-- earlier never change again, whatever the tenant's history holds.
--
-- The two constraints make "ended" and "has an end time" the same thing, so that a query by
-- ended_at misses no row that can change. They are checked for the rows already here (VALIDATE
-- takes only a SHARE UPDATE EXCLUSIVE lock: writes go on while it reads).
--
-- Both indexes are partial. holds_live is keyed as the lane's own HELD reads are (a bucket's
-- earliest expiry, its due holds), so a plan made while a tenant had few live holds never finds a
-- narrower index tempting and then scans every live hold of the tenant for one bucket. A new hold enters holds_live (one entry per Reserve; its
-- cost is measured in docs/performance.md); the update that ends it, which is not a HOT update
-- already (state is in holds_bucket_state), enters holds_ended instead, and its holds_live entry
-- dies with the old row version. Without holds_live, the live holds of a tenant could only be found
-- by reading all of its holds, or by one probe of holds_bucket_state per bucket (measured: slower
-- than reading 30 ended holds per bucket).
-- Built without CONCURRENTLY (Flyway runs each migration in a transaction): on a shard that already
-- holds millions of holds, build them by hand first with CREATE INDEX CONCURRENTLY ...; IF NOT
-- EXISTS then skips them here.
ALTER TABLE holds ADD CONSTRAINT holds_ended_iff_not_held CHECK ((state = 'HELD') = (ended_at IS NULL)) NOT VALID;
ALTER TABLE holds VALIDATE CONSTRAINT holds_ended_iff_not_held;
ALTER TABLE transfers ADD CONSTRAINT transfers_done_iff_not_pending CHECK ((state = 'PENDING') = (done_at IS NULL)) NOT VALID;
ALTER TABLE transfers VALIDATE CONSTRAINT transfers_done_iff_not_pending;
CREATE INDEX IF NOT EXISTS holds_ended ON holds (tenant_id, ended_at) WHERE ended_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS holds_live ON holds (tenant_id, item_id, bucket_no, expires_at) WHERE state = 'HELD';
