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
import io.lastunit.router.auth.Authorization;
import io.lastunit.router.reserve.ReservePipeline;
import io.lastunit.router.route.CreateItemFanOut;
import io.lastunit.router.route.Router;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The public InventoryService as the router serves it, an adapter only: it validates every field
 * ({@link RequestValidator}, and the regions against the tenant's cell), authorizes the caller
 * ({@link Authorization}), hands the call on and maps the answer or the {@link Failure} to the
 * {@link StreamObserver}. A Reserve goes to the {@link ReservePipeline} (shedding, flow, routing,
 * batching); every other call to its shard through {@link Router}, and a CreateItem with region
 * quotas to every quota region ({@link CreateItemFanOut}). A Release or Restock tells the pipeline
 * that stock is back ({@link ReservePipeline#stockReturned}). Handlers never block. Thread-safe.
 */
public final class RouterInventoryService extends InventoryServiceGrpc.InventoryServiceImplBase {
    private final RequestValidator validator;
    private final Router router;
    private final Supplier<Topology> topology;
    private final ReservePipeline reserves;

    /** @param topology the current topology ({@code TopologyCache::current}); may throw {@link Failure} */
    public RouterInventoryService(RequestValidator validator, Router router, Supplier<Topology> topology,
                                  ReservePipeline reserves) {
        this.validator = validator;
        this.router = router;
        this.topology = topology;
        this.reserves = reserves;
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
            Authorization.check(r.getTenantId(), false);
            reply(reserves.reserve(r, Context.current()), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void createItem(CreateItemRequest r, StreamObserver<CreateItemResponse> out) {
        try {
            validator.createItem(r);
            Authorization.check(r.getTenantId(), true);
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
            Authorization.check(r.getTenantId(), true);
            String region = regionOr(r.getTenantId(), r.getRegion());
            CompletableFuture<RestockResponse> f = router.call(r.getTenantId(), r.getItemId(), region, true,
                    (ch, o) -> stub(ch, o).restock(r));
            reply(f.whenComplete((v, err) -> reserves.stockReturned(r.getTenantId(), r.getItemId(), region)), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void getStock(GetStockRequest r, StreamObserver<GetStockResponse> out) {
        try {
            validator.getStock(r);
            Authorization.check(r.getTenantId(), false);
            String region = regionOr(r.getTenantId(), r.getRegion());
            reply(router.call(r.getTenantId(), r.getItemId(), region, true, (ch, o) -> stub(ch, o).getStock(r)), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    private HoldId hold(String holdId) {
        HoldId id = validator.holdId(holdId);
        Authorization.check(id.tenantId(), false);
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
            reply(f.whenComplete((v, err) -> reserves.stockReturned(id.tenantId(), id.itemId(), id.region())), out);
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

    @Override
    public void getSeatMap(io.lastunit.api.inventory.v1.GetSeatMapRequest r,
                           StreamObserver<io.lastunit.api.inventory.v1.GetSeatMapResponse> out) {
        try {
            validator.getSeatMap(r);
            Authorization.check(r.getTenantId(), false);
            String region = regionOr(r.getTenantId(), r.getRegion());
            reply(router.call(r.getTenantId(), r.getItemId(), region, true, (ch, o) -> stub(ch, o).getSeatMap(r)), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void setSeatsOnSale(io.lastunit.api.inventory.v1.SetSeatsOnSaleRequest r,
                               StreamObserver<io.lastunit.api.inventory.v1.SetSeatsOnSaleResponse> out) {
        try {
            validator.setSeatsOnSale(r);
            Authorization.check(r.getTenantId(), true);
            String region = regionOr(r.getTenantId(), r.getRegion());
            var f = router.call(r.getTenantId(), r.getItemId(), region, true, (ch, o) -> stub(ch, o).setSeatsOnSale(r));
            // Seats put back on sale: forget the cached SOLD_OUT before replying.
            reply(f.whenComplete((v, err) -> reserves.stockReturned(r.getTenantId(), r.getItemId(), region)), out);
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }
}
