-- lastunit shard schema, version 9: the fence of a tenant move's writers (docs/moves.md, "On the
-- shard").
--
-- A move's lease in ZooKeeper is advice between movers: a mover that lost it (its session
-- expired, another mover adopted the move) may still have a call in flight, or queued on this
-- node's move thread, and that call lands. Each mover that adopts a move gets a token higher than
-- every earlier mover's (the move znode's version after its adoption write) and sends it with
-- every call that writes. Here is the highest token seen per (tenant, move). Every writing move
-- call upserts its row first in its own transaction, which takes the row's lock until the commit,
-- and is refused (MOVE_SUPERSEDED, rolled back, nothing written) when the stored token is higher
-- than its own; so no call of a stale mover commits after a newer mover's call here.
--
-- Kept small: DropTenant of MOVED items deletes the tenant's rows of every other move (a tenant is
-- in one move at a time, so those have finished); a row per move of the tenant since the last
-- such drop on this shard remains. Not a tenant table: an export does not copy it.
CREATE TABLE move_tokens (
    tenant_id  text   NOT NULL,
    move_id    text   NOT NULL,
    token      bigint NOT NULL CHECK (token > 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, move_id)
);
