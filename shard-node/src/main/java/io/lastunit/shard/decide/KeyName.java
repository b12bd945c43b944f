package io.lastunit.shard.decide;

/**
 * What names one Reserve: an idempotency key of one item of one tenant. Two items of a tenant
 * may use the same key; within an item a key names one hold in every region.
 */
public record KeyName(String tenantId, String itemId, String key) {
}
