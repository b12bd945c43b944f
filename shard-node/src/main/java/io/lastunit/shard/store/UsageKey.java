package io.lastunit.shard.store;

/** One buyer's usage of one item of one tenant: a row of {@code buyer_usage}. */
public record UsageKey(String tenantId, String itemId, String buyerId) {
}
