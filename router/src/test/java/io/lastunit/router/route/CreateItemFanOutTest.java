package io.lastunit.router.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** CreateItemFanOut with futures completed by the test: which region is called when, and what is answered. */
class CreateItemFanOutTest {
    static final CreateItemRequest NO_QUOTAS = CreateItemRequest.newBuilder().setTenantId("acme").setItemId("sku-1")
            .setTotal(10).setHomeRegion("eu").build();
    static final CreateItemRequest THREE_REGIONS = NO_QUOTAS.toBuilder()
            .addRegionQuotas(quota("us", 3)).addRegionQuotas(quota("eu", 5)).addRegionQuotas(quota("ap", 2)).build();

    /** region → the future its call returns, in call order. */
    final Map<String, CompletableFuture<CreateItemResponse>> calls = new LinkedHashMap<>();

    static RegionQuota quota(String region, long quantity) {
        return RegionQuota.newBuilder().setRegion(region).setQuantity(quantity).build();
    }

    static CreateItemResponse created(String region, long total) {
        return CreateItemResponse.newBuilder().setCreated(true)
                .setStock(Stock.newBuilder().setItemId("sku-1-" + region).setTotal(total)).build();
    }

    CompletableFuture<CreateItemResponse> createIn(String region) {
        CompletableFuture<CreateItemResponse> f = new CompletableFuture<>();
        assertThat(calls.put(region, f)).as("region %s called twice", region).isNull();
        return f;
    }

    static Throwable failureOf(CompletableFuture<?> f) {
        assertThat(f).isCompletedExceptionally();
        Throwable e = f.handle((a, err) -> err).join();
        return e instanceof CompletionException ? e.getCause() : e;
    }

    @Test
    void create_withoutQuotas_callsTheHomeRegionOnly() {
        CompletableFuture<CreateItemResponse> f = CreateItemFanOut.create(NO_QUOTAS, this::createIn);

        assertThat(calls.keySet()).containsExactly("eu");
        calls.get("eu").complete(created("eu", 10));
        assertThat(f.join()).isEqualTo(created("eu", 10));
    }

    @Test
    void create_withOnlyAHomeQuota_callsTheHomeRegionOnly() {
        CreateItemRequest r = NO_QUOTAS.toBuilder().addRegionQuotas(quota("eu", 10)).build();

        CreateItemFanOut.create(r, this::createIn);

        assertThat(calls.keySet()).containsExactly("eu");
    }

    @Test
    void create_callsEveryNonHomeRegionFirst_thenHome_andAnswersHomesResponse() {
        CompletableFuture<CreateItemResponse> f = CreateItemFanOut.create(THREE_REGIONS, this::createIn);

        assertThat(calls.keySet()).containsExactly("us", "ap");
        calls.get("ap").complete(created("ap", 2));
        assertThat(calls.keySet()).as("home waits for every non-home region").containsExactly("us", "ap");
        calls.get("us").complete(created("us", 3));
        assertThat(calls.keySet()).containsExactly("us", "ap", "eu");
        assertThat(f).isNotDone();
        calls.get("eu").complete(created("eu", 10).toBuilder().setCreated(false).build());

        assertThat(f.join()).isEqualTo(created("eu", 10).toBuilder().setCreated(false).build());
    }

    @Test
    void create_nonHomeFailure_failsTheCallUnchanged_andNeverCallsHome() {
        Failure retryable = Failure.retryable(Reason.SHARD_UNAVAILABLE, "us down", Duration.ofMillis(500));
        CompletableFuture<CreateItemResponse> f = CreateItemFanOut.create(THREE_REGIONS, this::createIn);

        calls.get("us").completeExceptionally(retryable);
        assertThat(f).as("waits for the other non-home region").isNotDone();
        calls.get("ap").complete(created("ap", 2));

        assertThat(failureOf(f)).isSameAs(retryable);
        assertThat(calls.keySet()).containsExactly("us", "ap");
    }

    @Test
    void create_twoNonHomeFailures_reportsTheFirstInQuotaOrder() {
        Failure us = Failure.of(Reason.ITEM_EXISTS, "us differs");
        Failure ap = Failure.retryable(Reason.SHARD_UNAVAILABLE, "ap down", Duration.ofMillis(500));
        CompletableFuture<CreateItemResponse> f = CreateItemFanOut.create(THREE_REGIONS, this::createIn);

        calls.get("ap").completeExceptionally(ap);
        calls.get("us").completeExceptionally(us);

        assertThat(failureOf(f)).isSameAs(us);
    }

    @Test
    void create_homeFailure_failsTheCallUnchanged() {
        Failure home = Failure.retryable(Reason.STORE_UNAVAILABLE, "eu store down", Duration.ofMillis(50));
        CompletableFuture<CreateItemResponse> f = CreateItemFanOut.create(THREE_REGIONS, this::createIn);
        calls.get("us").complete(created("us", 3));
        calls.get("ap").complete(created("ap", 2));

        calls.get("eu").completeExceptionally(home);

        assertThat(failureOf(f)).isSameAs(home);
    }

    @Test
    void create_throwingCall_failsTheCall() {
        IllegalStateException boom = new IllegalStateException("closing");

        CompletableFuture<CreateItemResponse> f = CreateItemFanOut.create(NO_QUOTAS, region -> {
            throw boom;
        });

        assertThat(failureOf(f)).isSameAs(boom);
    }
}
