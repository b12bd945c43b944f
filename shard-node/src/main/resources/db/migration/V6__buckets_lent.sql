-- lastunit shard schema, version 6: each bucket counts the units it has lent to sibling buckets
-- (a borrow adds to the lender's total, in the borrow's own transaction). A lane's cached
-- counters carry the total of the row they came from; the borrower publishes the new total in
-- memory after its commit, so the lender's lane subtracts the borrows its counters do not
-- reflect yet instead of promising units that are gone (docs/escrow-buckets.md, "Borrowing").
-- Only ever grows; nothing else reads it.
ALTER TABLE buckets ADD COLUMN lent bigint NOT NULL DEFAULT 0 CHECK (lent >= 0);
