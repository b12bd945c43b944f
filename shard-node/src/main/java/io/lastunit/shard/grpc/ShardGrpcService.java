package io.lastunit.shard.grpc;

import io.grpc.stub.StreamObserver;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.shard.v1.CountItemsRequest;
import io.lastunit.api.shard.v1.CountItemsResponse;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.Failure;
import io.lastunit.common.RequestValidator;
import io.lastunit.shard.store.InvariantChecker;
import io.lastunit.shard.store.ReadPool;

/** The internal shard API: the on-demand invariant check. An adapter only. */
public final class ShardGrpcService extends ShardServiceGrpc.ShardServiceImplBase {
    private final RequestValidator validator;
    private final InvariantChecker checker;
    private final ReadPool reads;
    private final String shardId;

    public ShardGrpcService(RequestValidator validator, InvariantChecker checker, ReadPool reads, String shardId) {
        this.validator = validator;
        this.checker = checker;
        this.reads = reads;
        this.shardId = shardId;
    }

    @Override
    public void countItems(CountItemsRequest request, StreamObserver<CountItemsResponse> out) {
        try {
            validator.tenant(request.getTenantId());
            Replies.send(reads.submit(c -> {
                try (var ps = c.prepareStatement("SELECT count(*) FROM items WHERE tenant_id = ?")) {
                    ps.setString(1, request.getTenantId());
                    try (var rs = ps.executeQuery()) {
                        rs.next();
                        return rs.getLong(1);
                    }
                }
            }), n -> CountItemsResponse.newBuilder().setShardId(shardId).setItems(n).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void checkInvariants(CheckInvariantsRequest request, StreamObserver<InvariantReport> out) {
        try {
            if (!request.getTenantId().isEmpty()) {
                validator.tenant(request.getTenantId());
            }
            if (!request.getItemId().isEmpty()) {
                if (request.getTenantId().isEmpty()) {
                    throw Failure.invalid("tenant_id", "is required when item_id is given");
                }
                validator.item(request.getItemId());
            }
            Replies.send(reads.submit(c -> checker.check(c, request.getTenantId(), request.getItemId())), r -> r, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }
}
