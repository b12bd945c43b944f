package io.lastunit.shard.grpc;

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
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReleaseResponse;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.RestockResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.common.RequestValidator;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.shard.store.HoldRow;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.ReadPool;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The public API served by a shard node: validates every field at the edge, then hands writes
 * to the {@link LaneEngine} and reads to the {@link ReadPool}. An adapter only: no decisions.
 * Handlers never block, so the server runs them on the transport threads.
 */
public final class InventoryGrpcService extends InventoryServiceGrpc.InventoryServiceImplBase {
    private final RequestValidator validator;
    private final LaneEngine engine;
    private final ReadPool reads;
    private final PlacementGuard placement;
    private final String defaultRegion;
    private final ItemStore items = new ItemStore();
    private final io.lastunit.shard.seats.SeatStore seatStore = new io.lastunit.shard.seats.SeatStore();
    private final AtomicLong calls = new AtomicLong();

    public InventoryGrpcService(RequestValidator validator, LaneEngine engine, ReadPool reads,
                                PlacementGuard placement, String defaultRegion) {
        this.validator = validator;
        this.engine = engine;
        this.reads = reads;
        this.placement = placement;
        this.defaultRegion = defaultRegion;
    }

    /** Calls this service has received (answered or refused). */
    public long calls() {
        return calls.get();
    }

    @Override
    public void createItem(CreateItemRequest request, StreamObserver<CreateItemResponse> out) {
        try {
            calls.incrementAndGet();
            validator.createItem(request);
            // With region quotas the router sends CreateItem to each quota region's shard, and each
            // takes its own quota; without, the item lives in its home region only.
            String region = request.getRegionQuotasCount() == 0 ? request.getHomeRegion()
                    : placement.regionOr("", defaultRegion);
            placement.check(request.getTenantId(), request.getItemId(), region);
            Replies.send(engine.createItem(request, region), r -> r, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void restock(RestockRequest request, StreamObserver<RestockResponse> out) {
        try {
            calls.incrementAndGet();
            validator.restock(request);
            placement.check(request.getTenantId(), request.getItemId(),
                    placement.regionOr(request.getRegion(), defaultRegion));
            Replies.send(engine.restock(request), r -> r, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void getStock(GetStockRequest request, StreamObserver<GetStockResponse> out) {
        try {
            calls.incrementAndGet();
            validator.getStock(request);
            placement.check(request.getTenantId(), request.getItemId(),
                    placement.regionOr(request.getRegion(), defaultRegion));
            Replies.send(reads.submit("GetStock read failed", c -> {
                var stock = items.readStock(c, request.getTenantId(), request.getItemId());
                if (stock == null) {
                    throw Failure.of(Reason.ITEM_NOT_FOUND,
                            "no item " + request.getTenantId() + "/" + request.getItemId() + " on this shard");
                }
                return stock;
            }), s -> GetStockResponse.newBuilder().setStock(s).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void reserve(ReserveRequest request, StreamObserver<ReserveResponse> out) {
        try {
            Replies.send(submitReserve(request), r -> r, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    /** Validated, placement-checked and handed to its lane; throws the {@link Failure} of a refusal at the edge. */
    private CompletableFuture<ReserveResponse> submitReserve(ReserveRequest request) {
        calls.incrementAndGet();
        validator.reserve(request);
        placement.check(request.getTenantId(), request.getItemId(), request.getRegion());
        return engine.reserve(request);
    }

    @Override
    public void extend(ExtendRequest request, StreamObserver<ExtendResponse> out) {
        try {
            calls.incrementAndGet();
            HoldId id = validator.holdId(request.getHoldId());
            placement.check(id.tenantId(), id.itemId(), id.region());
            Replies.send(engine.extend(id), h -> ExtendResponse.newBuilder().setHold(h).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void confirm(ConfirmRequest request, StreamObserver<ConfirmResponse> out) {
        try {
            calls.incrementAndGet();
            HoldId id = validator.confirm(request);
            placement.check(id.tenantId(), id.itemId(), id.region());
            Replies.send(engine.confirm(id, request.getOrderRef()),
                    h -> ConfirmResponse.newBuilder().setHold(h).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void release(ReleaseRequest request, StreamObserver<ReleaseResponse> out) {
        try {
            calls.incrementAndGet();
            HoldId id = validator.holdId(request.getHoldId());
            placement.check(id.tenantId(), id.itemId(), id.region());
            Replies.send(engine.release(id), h -> ReleaseResponse.newBuilder().setHold(h).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void getHold(GetHoldRequest request, StreamObserver<GetHoldResponse> out) {
        try {
            calls.incrementAndGet();
            HoldId id = validator.holdId(request.getHoldId());
            placement.check(id.tenantId(), id.itemId(), id.region());
            Replies.send(reads.submit("GetHold read failed", c -> {
                HoldRow h = items.readHold(c, id.uuid());
                if (h == null || !h.id().equals(id)) {
                    throw Failure.of(Reason.HOLD_NOT_FOUND, "no hold " + request.getHoldId());
                }
                var seats = seatStore.seatIdsOf(c, id.uuid());
                return seats.isEmpty() ? h.toProto() : h.toProto().toBuilder().addAllSeatIds(seats).build();
            }), h -> GetHoldResponse.newBuilder().setHold(h).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void getSeatMap(io.lastunit.api.inventory.v1.GetSeatMapRequest request,
                           StreamObserver<io.lastunit.api.inventory.v1.GetSeatMapResponse> out) {
        try {
            calls.incrementAndGet();
            validator.getSeatMap(request);
            placement.check(request.getTenantId(), request.getItemId(),
                    placement.regionOr(request.getRegion(), defaultRegion));
            String section = request.getSectionId().isEmpty() ? null : request.getSectionId();
            Replies.send(reads.submit("GetSeatMap read failed", c -> {
                var stock = items.readStock(c, request.getTenantId(), request.getItemId());
                if (stock == null) {
                    throw Failure.of(Reason.ITEM_NOT_FOUND,
                            "no item " + request.getTenantId() + "/" + request.getItemId() + " on this shard");
                }
                if (stock.getKind() != io.lastunit.api.inventory.v1.ItemKind.SEATED) {
                    throw Failure.invalid("item_id", "item " + request.getItemId() + " is COUNTED: it has no seat map");
                }
                var map = seatStore.readMap(c, request.getTenantId(), request.getItemId(), section, request.getCompact());
                if (section != null && map.getFree() + map.getHeld() + map.getSold() + map.getKilled() == 0) {
                    throw Failure.invalid("section_id", "'" + section + "' is not a section of item " + request.getItemId());
                }
                return map.setStock(stock).build();
            }), r -> r, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void setSeatsOnSale(io.lastunit.api.inventory.v1.SetSeatsOnSaleRequest request,
                               StreamObserver<io.lastunit.api.inventory.v1.SetSeatsOnSaleResponse> out) {
        try {
            calls.incrementAndGet();
            validator.setSeatsOnSale(request);
            placement.check(request.getTenantId(), request.getItemId(),
                    placement.regionOr(request.getRegion(), defaultRegion));
            Replies.send(engine.setSeatsOnSale(request), r -> r, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }
}
