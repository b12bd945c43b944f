package io.lastunit.shard.move;

import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The fence of a move's writers on this shard ({@code move_tokens}, schema V9): the highest
 * mover token seen per (tenant, move). Every call of a move that writes is admitted here first, in
 * its own transaction: the upsert keeps the higher of the stored and the given token and locks the
 * row until the commit, so calls of one move are admitted one at a time, and a call whose token is
 * lower than one already committed is refused with nothing written. A mover's token is the move
 * znode's version after it adopted the move, higher for each mover that takes the move over; so
 * once a newer mover's call has committed here, no call of an older mover commits after it, however
 * late it arrives.
 *
 * <p>Stateless and thread-safe; the caller owns the connection (READ COMMITTED, autocommit off),
 * holds the tenant's lock first (every writing move call takes it before its token, so they lock in
 * one order), and commits. Hazard: a token only orders the movers of one move; a stale mover of an
 * earlier move whose row was deleted ({@link #forgetOtherMoves}) is no longer fenced here.
 */
public final class MoveTokens {
    /**
     * Admits {@code call} ({@code what}: the RPC, for the message): stores its token unless a
     * higher one is stored for its tenant and move.
     *
     * @throws Failure MOVE_SUPERSEDED, after rolling back, when a higher token is stored
     */
    public void admit(Connection c, MoveCall call, String what, String shardId) throws SQLException {
        long stored;
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO move_tokens AS m (tenant_id, move_id, token) VALUES (?, ?, ?)
                ON CONFLICT (tenant_id, move_id)
                DO UPDATE SET token = GREATEST(m.token, EXCLUDED.token), updated_at = now()
                RETURNING token""")) {
            ps.setString(1, call.tenant());
            ps.setString(2, call.moveId());
            ps.setLong(3, call.token());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                stored = rs.getLong(1);
            }
        }
        if (stored > call.token()) {
            c.rollback();
            throw Failure.of(Reason.MOVE_SUPERSEDED, what + " of tenant " + call.tenant() + ", move " + call.moveId()
                    + ": mover_token=" + call.token() + " is older than token " + stored + " that another mover of"
                    + " the move used on shard " + shardId + "; that mover owns the move now, nothing was written");
        }
    }

    /**
     * Deletes the tenant's tokens of every move but {@code moveId}: a tenant is in one move at a
     * time, so those moves have finished. Returns how many it deleted.
     */
    public int forgetOtherMoves(Connection c, String tenant, String moveId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "DELETE FROM move_tokens WHERE tenant_id = ? AND move_id <> ?")) {
            ps.setString(1, tenant);
            ps.setString(2, moveId);
            return ps.executeUpdate();
        }
    }
}
