package io.lastunit.shard.decide;

/** One item of one tenant. */
public record ItemName(String tenantId, String itemId) {
}
