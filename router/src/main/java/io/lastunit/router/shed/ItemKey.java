package io.lastunit.router.shed;

/** One item of one tenant in one region: what the sold-out cache and the in-flight cap count per. */
public record ItemKey(String tenantId, String itemId, String region) {
}
