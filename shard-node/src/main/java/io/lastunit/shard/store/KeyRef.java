package io.lastunit.shard.store;

/**
 * What names one Reserve: an idempotency key of one item of one tenant. Two items of a tenant
 * may use the same key for two Reserves; within an item a key names one hold in every region.
 */
public record KeyRef(String tenantId, String itemId, String key) {
}
