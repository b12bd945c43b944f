-- Bytes per hold on a shard (docs/operations/capacity.md): the holds row, its five indexes and its
-- outbox rows, for :n holds of one item in 8 buckets, written as a lane writes them: a time-ordered
-- (version-7-like) hold id, a client key of 36 characters, the 22-character request fingerprint,
-- every 32 holds (a batch) sharing the database's clock. Then every hold is confirmed (SOLD, with an
-- order reference, and a SOLD outbox row) and VACUUMed, then the tables are compacted. The WAL of
-- the inserts and of the confirmations is measured too. Run by bench/bytes-per-hold on a fresh
-- database with the shard schema; sizes are pg_relation_size of each table and index.
\if :{?n}
\else
\set n 200000
\endif
INSERT INTO items (tenant_id, item_id, home_region, total, initial_total, per_buyer_limit, hold_ttl_ms,
                   extend_by_ms, bucket_count, created_total)
VALUES ('acme', 'sku-000001', 'eu-west', 1000000, 1000000, 0, 600000, 300000, 8, 1000000);
INSERT INTO buckets (tenant_id, item_id, bucket_no, allotment, available, held, sold)
SELECT 'acme', 'sku-000001', b, 125000, 125000, 0, 0 FROM generate_series(0, 7) b;

CREATE TEMP TABLE sizes (phase text, rel text, bytes bigint);
CREATE FUNCTION snap(p text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO sizes
  SELECT p, c.relname, pg_relation_size(c.oid) FROM pg_class c
  WHERE c.relname IN ('holds', 'holds_pkey', 'holds_key_unique', 'holds_bucket_state', 'holds_live', 'holds_ended',
                      'outbox', 'outbox_pkey')
  UNION ALL SELECT p, 'holds toast', coalesce(pg_total_relation_size(reltoastrelid), 0) FROM pg_class WHERE relname = 'holds'
$$;

SELECT pg_current_wal_lsn() AS lsn0 \gset
INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                   request_fingerprint, state, created_at, expires_at)
SELECT (lpad(to_hex(1764770000000 + i / 10), 12, '0') || '7' || substr(md5(i::text), 1, 3) || '8'
        || substr(md5(i::text), 4, 15))::uuid,
       'acme', 'sku-000001', i % 8, 'eu-west', 1, 'buyer-' || lpad(i::text, 8, '0'),
       gen_random_uuid()::text, substr(encode(sha256(i::text::bytea), 'base64'), 1, 22), 'HELD',
       now() + (i / 32) * interval '1 millisecond', now() + interval '10 minutes' + (i / 32) * interval '1 millisecond'
FROM generate_series(1, :n) i;
INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty) SELECT tenant_id, item_id, 'HELD', hold_id, qty FROM holds;
SELECT pg_current_wal_lsn() AS lsn1 \gset
VACUUM ANALYZE holds;
VACUUM ANALYZE outbox;
SELECT snap('held');
SELECT pg_current_wal_lsn() AS lsn2 \gset

UPDATE holds SET state = 'SOLD', order_ref = 'order-' || lpad(bucket_no::text, 2, '0') || substr(hold_id::text, 25),
                 ended_at = created_at + interval '2 minutes' + (hold_id::text < '8')::int * interval '1 millisecond';
INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty) SELECT tenant_id, item_id, 'SOLD', hold_id, qty FROM holds;
SELECT pg_current_wal_lsn() AS lsn3 \gset
VACUUM ANALYZE holds;
VACUUM ANALYZE outbox;
SELECT snap('sold');
VACUUM FULL holds;
VACUUM FULL outbox;
SELECT snap('sold, compacted');

\pset footer off
SELECT rel, phase, bytes, round(bytes::numeric / :n, 1) AS bytes_per_hold FROM sizes ORDER BY rel, phase;
SELECT phase, sum(bytes) AS bytes, round(sum(bytes)::numeric / :n, 1) AS bytes_per_hold,
       round(sum(bytes) FILTER (WHERE rel LIKE 'holds%')::numeric / :n, 1) AS holds_and_indexes,
       round(sum(bytes) FILTER (WHERE rel LIKE 'outbox%')::numeric / :n, 1) AS outbox_and_index
FROM sizes GROUP BY phase ORDER BY phase;
SELECT avg(pg_column_size(h.*))::int AS holds_row_bytes_held_or_sold FROM holds h;
SELECT round(pg_wal_lsn_diff(:'lsn1', :'lsn0') / :n, 1) AS wal_bytes_per_hold_reserve,
       round(pg_wal_lsn_diff(:'lsn3', :'lsn2') / :n, 1) AS wal_bytes_per_hold_confirm;
