package io.lastunit.shard.grpc;

import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.tls.AllowList;
import io.lastunit.common.tls.Role;

/**
 * Who may call a shard node under mutual TLS, by the code that calls it: the router serves the
 * whole public API through it (InventoryService) and batches Reserves and claims keys; the
 * bucket-balancer runs the transfer steps and reads levels and pending transfers for its moves and
 * its cross-shard check; the admin tools (the admin server's movers, {@code ./lastunit admin check},
 * {@code tenants assign}, {@code moves}) check invariants, count items, read levels and transfers, and
 * run a tenant's move. Nobody else, and no shard node. Stateless.
 */
public final class ShardAllowList {
    private ShardAllowList() {
    }

    public static AllowList of(String shardId) {
        return AllowList.builder("shard node " + shardId)
                .service(InventoryServiceGrpc.SERVICE_NAME, Role.ROUTER)
                .method(ShardServiceGrpc.getReserveBatchMethod().getFullMethodName(), Role.ROUTER)
                .method(ShardServiceGrpc.getClaimKeyMethod().getFullMethodName(), Role.ROUTER)
                .method(ShardServiceGrpc.getTransferOutMethod().getFullMethodName(), Role.BALANCER)
                .method(ShardServiceGrpc.getTransferInMethod().getFullMethodName(), Role.BALANCER)
                .method(ShardServiceGrpc.getCompleteTransferMethod().getFullMethodName(), Role.BALANCER)
                .method(ShardServiceGrpc.getListLevelsMethod().getFullMethodName(), Role.BALANCER, Role.ADMIN)
                .method(ShardServiceGrpc.getListTransfersMethod().getFullMethodName(), Role.BALANCER, Role.ADMIN)
                .method(ShardServiceGrpc.getCheckInvariantsMethod().getFullMethodName(), Role.ADMIN)
                .method(ShardServiceGrpc.getCountItemsMethod().getFullMethodName(), Role.ADMIN)
                .method(ShardServiceGrpc.getExportTenantMethod().getFullMethodName(), Role.ADMIN)
                .method(ShardServiceGrpc.getImportTenantMethod().getFullMethodName(), Role.ADMIN)
                .method(ShardServiceGrpc.getFreezeTenantMethod().getFullMethodName(), Role.ADMIN)
                .method(ShardServiceGrpc.getUnfreezeTenantMethod().getFullMethodName(), Role.ADMIN)
                .method(ShardServiceGrpc.getActivateTenantMethod().getFullMethodName(), Role.ADMIN)
                .method(ShardServiceGrpc.getRetireTenantMethod().getFullMethodName(), Role.ADMIN)
                .method(ShardServiceGrpc.getDropTenantMethod().getFullMethodName(), Role.ADMIN)
                .method(ShardServiceGrpc.getSummarizeTenantMethod().getFullMethodName(), Role.ADMIN)
                .build();
    }
}
