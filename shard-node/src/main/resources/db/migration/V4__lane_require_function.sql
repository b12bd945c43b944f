-- lastunit shard schema, version 4: a check a statement can make of its own results.
--
-- A lane batch made only of new holds runs as one statement in its own transaction: it inserts
-- the holds and their outbox rows, then updates the buckets' counters conditionally, and commits
-- with no further round trip. That statement must not commit half of its work: if the insert
-- skipped a key already used in the tenant, or a bucket's conditional update matched no row
-- (the lane's cached counters were stale), it calls this function, which raises SQLSTATE LU002
-- and so rolls the whole statement back. The lane then decides the batch again, statement by
-- statement, as every other batch is written.
CREATE OR REPLACE FUNCTION lastunit_require(ok boolean, reason text) RETURNS boolean
    LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF ok IS NOT TRUE THEN
        RAISE EXCEPTION USING ERRCODE = 'LU002', MESSAGE = reason;
    END IF;
    RETURN true;
END
$$;
