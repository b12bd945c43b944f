package io.lastunit.shard.move;

/**
 * Who makes a writing call of a move: the tenant, the move and the calling mover's fencing token
 * ({@link MoveTokens}). Validated at the edge: a tenant id, a move id, a token above 0.
 */
public record MoveCall(String tenant, String moveId, long token) {
    public MoveCall {
        if (token < 1) {
            throw new IllegalArgumentException("a move call needs a mover token > 0, got " + token + " (move "
                    + moveId + ")");
        }
    }
}
