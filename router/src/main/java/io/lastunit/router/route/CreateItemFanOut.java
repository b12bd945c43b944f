package io.lastunit.router.route;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.api.inventory.v1.RegionQuota;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * Creates an item in every region it is sold in (DESIGN §6). Without {@code region_quotas} the
 * item lives in its home region only: one call there. With them, the same request goes to the
 * shard of every quota region (each shard takes its own quota from the list): first to every
 * non-home region, at once, and only when all of them succeeded to the home region, whose shard
 * holds the authoritative total; its response is the answer. The first failure, in quota order,
 * fails the whole call unchanged, so a retryable one stays retryable: CreateItem is idempotent
 * and a retry completes what is missing.
 *
 * <p>Stateless, thread-safe, never blocks. At most {@code region_quotas} (≤ 16) calls.
 */
public final class CreateItemFanOut {
    private CreateItemFanOut() {
    }

    /**
     * @param createIn sends {@code r} to the shard placement picks for (tenant, item, region) in
     *                 the region given
     */
    public static CompletableFuture<CreateItemResponse> create(
            CreateItemRequest r, Function<String, CompletableFuture<CreateItemResponse>> createIn) {
        String home = r.getHomeRegion();
        List<CompletableFuture<CreateItemResponse>> others = new ArrayList<>();
        for (RegionQuota q : r.getRegionQuotasList()) {
            if (!q.getRegion().equals(home)) {
                others.add(call(createIn, q.getRegion()));
            }
        }
        if (others.isEmpty()) {
            return call(createIn, home);
        }
        return CompletableFuture.allOf(others.toArray(CompletableFuture[]::new))
                // allOf fails with whichever failed first in time; report the first in quota order.
                .handle((ignored, err) -> firstFailure(others))
                .thenCompose(failure -> failure == null ? call(createIn, home) : CompletableFuture.failedFuture(failure));
    }

    private static CompletableFuture<CreateItemResponse> call(
            Function<String, CompletableFuture<CreateItemResponse>> createIn, String region) {
        try {
            return createIn.apply(region);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static Throwable firstFailure(List<CompletableFuture<CreateItemResponse>> done) {
        for (CompletableFuture<CreateItemResponse> f : done) {
            if (f.isCompletedExceptionally()) {
                try {
                    f.join();
                } catch (CompletionException e) {
                    return e.getCause() != null ? e.getCause() : e;
                } catch (RuntimeException e) {
                    return e; // cancelled
                }
            }
        }
        return null;
    }
}
