package io.lastunit.router.grpc;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.ConfirmResponse;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.ExtendResponse;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.GetHoldResponse;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.GetStockResponse;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReleaseResponse;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.RestockResponse;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.common.RequestValidator;
import io.lastunit.common.topology.Topology;
import io.lastunit.router.auth.AuthInterceptor;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.router.route.CreateItemFanOut;
import io.lastunit.router.route.ReserveBatcher;
import io.lastunit.router.route.ReserveFlow;
import io.lastunit.router.route.Router;
import io.lastunit.router.shed.BuyerRateLimiter;
import io.lastunit.router.shed.InFlightLimiter;
import io.lastunit.router.shed.RecentKeys;
import io.lastunit.router.shed.SoldOutCache;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The public InventoryService as the router serves it: validate every field, authorize the
 * tenant, shed what can be answered here (a recent SOLD_OUT, a buyer over its rate, an item with
 * too many calls in flight), then route to the owning shard (Reserves in batches, through
 * {@link ReserveBatcher}). Items sold in several regions: a
 * Reserve goes through {@link ReserveFlow} (a dry region pulls stock through the balancer; a
 * collapsed item's FORWARDED is followed home by {@link Router#callFollowingForward}); a
 * CreateItem with region quotas goes to every quota region ({@link CreateItemFanOut}). Handlers
 * never block. Thread-safe.
 */
public final class RouterInventoryService extends InventoryServiceGrpc.InventoryServiceImplBase {
    private final RequestValidator validator;
    private final Router router;
    private final ReserveFlow reserveFlow;
    private final ReserveBatcher batcher;
    private final Supplier<Topology> topology;
    private final SoldOutCache soldOut;
    private final BuyerRateLimiter buyers;
    private final InFlightLimiter inFlight;
    private final RecentKeys recentKeys;
    /** Reserve calls answered by the router itself (sold-out cache, rate limit, in-flight cap). */
    private final AtomicLong shed = new AtomicLong();

    /** @param topology the current topology ({@code TopologyCache::current}); may throw {@link Failure} */
    public RouterInventoryService(RequestValidator validator, Router router, ReserveFlow reserveFlow,
                                  ReserveBatcher batcher, Supplier<Topology> topology, SoldOutCache soldOut,
                                  BuyerRateLimiter buyers,
                                  InFlightLimiter inFlight, RecentKeys recentKeys) {
        this.validator = validator;
        this.router = router;
        this.reserveFlow = reserveFlow;
        this.batcher = batcher;
        this.topology = topology;
        this.soldOut = soldOut;
        this.buyers = buyers;
        this.inFlight = inFlight;
        this.recentKeys = recentKeys;
    }

    public long shedCount() {
        return shed.get();
    }

    private static Authenticator.Principal principal() {
        Authenticator.Principal p = AuthInterceptor.PRINCIPAL.get();
        if (p == null) {
            throw Failure.of(Reason.UNAUTHENTICATED, "no principal on the call");
        }
        return p;
    }

    private static void authorize(String tenant, boolean adminCall) {
        Authenticator.Principal p = principal();
        if (!p.mayUse(tenant)) {
            throw Failure.of(Reason.PERMISSION_DENIED, "caller " + p.name() + " may not use tenant " + tenant);
        }
        if (adminCall && !p.admin()) {
            throw Failure.of(Reason.PERMISSION_DENIED, "caller " + p.name() + " lacks the admin role");
        }
    }

    /** The requested region, or the tenant's cell's only region when none is given. */
    private String regionOr(String tenant, String requested) {
        if (!requested.isEmpty()) {
            return requested;
        }
        var t = topology.get();
        String cell = t.cellOf(tenant);
        Cell c = t.cell(cell)
                .orElseThrow(() -> Failure.retryable(Reason.TOPOLOGY_UNAVAILABLE, "cell " + cell + " is unknown",
                        Duration.ofSeconds(1)));
        if (c.getRegionsCount() != 1) {
            throw Failure.invalid("region", "is required: cell " + cell + " serves regions " + c.getRegionsList());
        }
        return c.getRegions(0);
    }

    /**
     * A Reserve without a region gets the tenant's cell's only region, as GetStock and Restock do
     * ({@link #regionOr}), before anything else reads it: the shed checks, the shard and the hold
     * id all see the filled region. The fields before {@code region} are checked first, so the
     * topology is asked only about a valid tenant and refusals keep field order.
     */
    private ReserveRequest withCellRegion(ReserveRequest r) {
        if (!r.getRegion().isEmpty()) {
            return r;
        }
        validator.reserveBeforeRegion(r);
        return r.toBuilder().setRegion(regionOr(r.getTenantId(), "")).build();
    }

    /** Every quota region must be served by the tenant's cell: refused naming the quota's field. */
    private void checkQuotaRegions(CreateItemRequest r) {
        if (r.getRegionQuotasCount() == 0) {
            return;
        }
        Topology t = topology.get();
        String cell = t.cellOf(r.getTenantId());
        // An unknown cell is left to the router, which answers it as it answers any call.
        Cell c = t.cell(cell).orElse(null);
        for (RegionQuota q : r.getRegionQuotasList()) {
            if (c != null && !c.getRegionsList().contains(q.getRegion())) {
                throw Failure.invalid("region_quotas.region", "'" + q.getRegion() + "' is not served by cell "
                        + cell + " of tenant " + r.getTenantId() + ", which serves " + c.getRegionsList());
            }
        }
    }

    private static <T> void reply(CompletableFuture<T> f, StreamObserver<T> out) {
        f.whenComplete((v, err) -> {
            try {
                if (err != null) {
                    out.onError(GrpcErrors.toStatus(err));
                } else {
                    out.onNext(v);
                    out.onCompleted();
                }
            } catch (RuntimeException cancelled) {
                // the caller went away
            }
        });
    }

    private static InventoryServiceGrpc.InventoryServiceFutureStub stub(io.grpc.ManagedChannel ch,
                                                                        io.grpc.CallOptions o) {
        return InventoryServiceGrpc.newFutureStub(ch).withDeadline(o.getDeadline());
    }

    @Override
    public void reserve(ReserveRequest request, StreamObserver<ReserveResponse> out) {
        try {
            ReserveRequest r = withCellRegion(request);
            validator.reserve(r);
            if (!r.getOriginRegion().isEmpty()) {
                throw Failure.invalid("origin_region", "is set by routers only; leave it empty");
            }
            authorize(r.getTenantId(), false);
            String key = SoldOutCache.key(r.getTenantId(), r.getItemId(), r.getRegion());
            SoldOutCache.Verdict cached = soldOut.check(key);
            // A key this router already sent on may have a hold: let the shard answer it.
            if (cached == SoldOutCache.Verdict.SOLD_OUT
                    && !recentKeys.seen(r.getTenantId(), r.getItemId(), r.getIdempotencyKey())) {
                shed.incrementAndGet();
                out.onNext(ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT).build());
                out.onCompleted();
                return;
            }
            boolean probe = cached == SoldOutCache.Verdict.PROBE;
            try {
                send(r, key, probe, out);
            } catch (RuntimeException notSent) {
                if (probe) {
                    soldOut.forget(key); // the probe was not sent: the next Reserve asks the shard
                }
                throw notSent;
            }
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    /**
     * Sheds by the buyer's rate and the item's calls in flight, else sends {@code r} to its shard
     * and answers {@code out} from there. A {@code probe} of the sold-out cache renews the entry
     * with a final SOLD_OUT and clears it with any other answer.
     */
    private void send(ReserveRequest r, String key, boolean probe, StreamObserver<ReserveResponse> out) {
        if (!buyers.tryAcquire(r.getTenantId(), r.getBuyerId())) {
            shed.incrementAndGet();
            throw Failure.retryable(Reason.RATE_LIMITED, "buyer " + r.getBuyerId() + " of tenant "
                    + r.getTenantId() + " is over its request rate", Duration.ofMillis(100));
        }
        if (!inFlight.tryAcquire(key)) {
            shed.incrementAndGet();
            throw Failure.retryable(Reason.ITEM_BUSY, "too many requests in flight for item " + r.getItemId(),
                    Duration.ofMillis(50));
        }
        Context ctx = Context.current();
        // Never throws: ReserveFlow turns a failed shard call into a failed future.
        CompletableFuture<ReserveFlow.Answer> f = reserveFlow.reserve(r, router.deadline(ctx),
                (req, deadline) -> router.callFollowingForward(ctx, deadline, req.getTenantId(), req.getItemId(),
                        req.getRegion(),
                        (region, ch, o) -> batcher.reserve(ch, ReserveFlow.sentTo(req, region), o.getDeadline())));
        // The bookkeeping runs before the reply is sent (the reply depends on it).
        reply(f.whenComplete((answer, err) -> {
            inFlight.release(key);
            ReserveResponse resp = answer == null ? null : answer.response();
            if (resp == null || resp.getOutcome() == ReserveOutcome.RESERVED) {
                recentKeys.remember(r.getTenantId(), r.getItemId(), r.getIdempotencyKey()); // placed, or outcome unknown
            } else if (answer.soldOutFinal() && r.getQuantity() == 1) {
                // Only a one-unit SOLD_OUT proves nothing is left; a larger request may fail
                // while a smaller one would still succeed, so it is not cached. Nor is a
                // SOLD_OUT of a region that stayed dry while another may still have stock.
                soldOut.markSoldOut(key);
                return;
            }
            if (probe) {
                soldOut.forget(key); // the probe did not prove the item still sold out
            }
        }).thenApply(ReserveFlow.Answer::response), out);
    }

    @Override
    public void createItem(CreateItemRequest r, StreamObserver<CreateItemResponse> out) {
        try {
            validator.createItem(r);
            authorize(r.getTenantId(), true);
            checkQuotaRegions(r);
            Context ctx = Context.current();
            Deadline deadline = router.deadline(ctx);
            reply(CreateItemFanOut.create(r, region -> router.call(ctx, deadline, r.getTenantId(), r.getItemId(),
                    region, true, (ch, o) -> stub(ch, o).createItem(r))), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void restock(RestockRequest r, StreamObserver<RestockResponse> out) {
        try {
            validator.restock(r);
            authorize(r.getTenantId(), true);
            String region = regionOr(r.getTenantId(), r.getRegion());
            CompletableFuture<RestockResponse> f = router.call(r.getTenantId(), r.getItemId(), region, true,
                    (ch, o) -> stub(ch, o).restock(r));
            reply(f.whenComplete((v, err) -> soldOut.forget(SoldOutCache.key(r.getTenantId(), r.getItemId(), region))),
                    out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void getStock(GetStockRequest r, StreamObserver<GetStockResponse> out) {
        try {
            validator.getStock(r);
            authorize(r.getTenantId(), false);
            String region = regionOr(r.getTenantId(), r.getRegion());
            reply(router.call(r.getTenantId(), r.getItemId(), region, true, (ch, o) -> stub(ch, o).getStock(r)), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    private HoldId hold(String holdId) {
        HoldId id = validator.holdId(holdId);
        authorize(id.tenantId(), false);
        return id;
    }

    @Override
    public void extend(ExtendRequest r, StreamObserver<ExtendResponse> out) {
        try {
            HoldId id = hold(r.getHoldId());
            reply(router.call(id.tenantId(), id.itemId(), id.region(), true, (ch, o) -> stub(ch, o).extend(r)), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void confirm(ConfirmRequest r, StreamObserver<ConfirmResponse> out) {
        try {
            validator.confirm(r);
            HoldId id = hold(r.getHoldId());
            reply(router.call(id.tenantId(), id.itemId(), id.region(), true, (ch, o) -> stub(ch, o).confirm(r)), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void release(ReleaseRequest r, StreamObserver<ReleaseResponse> out) {
        try {
            HoldId id = hold(r.getHoldId());
            CompletableFuture<ReleaseResponse> f = router.call(id.tenantId(), id.itemId(), id.region(), true,
                    (ch, o) -> stub(ch, o).release(r));
            // A released unit is for sale again: forget the cached SOLD_OUT before replying.
            reply(f.whenComplete((v, err) -> soldOut.forget(SoldOutCache.key(id.tenantId(), id.itemId(),
                    id.region()))), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void getHold(GetHoldRequest r, StreamObserver<GetHoldResponse> out) {
        try {
            HoldId id = hold(r.getHoldId());
            reply(router.call(id.tenantId(), id.itemId(), id.region(), true, (ch, o) -> stub(ch, o).getHold(r)), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }
}
