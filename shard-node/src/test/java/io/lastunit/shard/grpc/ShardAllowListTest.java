package io.lastunit.shard.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.MethodDescriptor;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.tls.AllowList;
import io.lastunit.common.tls.Role;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShardAllowListTest {
    static final AllowList LIST = ShardAllowList.of("s1");

    @Test
    void everyMethodOfTheShardsServices_isAllowedToSomeRole_andNoneToAShard() {
        List<MethodDescriptor<?, ?>> methods = new ArrayList<>(ShardServiceGrpc.getServiceDescriptor().getMethods());
        methods.addAll(InventoryServiceGrpc.getServiceDescriptor().getMethods());
        for (MethodDescriptor<?, ?> m : methods) {
            assertThat(LIST.rolesFor(m.getFullMethodName())).as(m.getFullMethodName()).isNotEmpty()
                    .doesNotContain(Role.SHARD);
        }
    }

    @Test
    void transfersAreTheBalancers_thePublicApiTheRoutersMovesTheAdmins() {
        assertThat(LIST.rolesFor(ShardServiceGrpc.getTransferOutMethod().getFullMethodName()))
                .containsExactly(Role.BALANCER);
        assertThat(LIST.rolesFor(InventoryServiceGrpc.getCreateItemMethod().getFullMethodName()))
                .containsExactly(Role.ROUTER);
        assertThat(LIST.rolesFor(ShardServiceGrpc.getReserveBatchMethod().getFullMethodName()))
                .containsExactly(Role.ROUTER);
        assertThat(LIST.rolesFor(ShardServiceGrpc.getExportTenantMethod().getFullMethodName()))
                .containsExactly(Role.ADMIN);
        assertThat(LIST.rolesFor(ShardServiceGrpc.getListLevelsMethod().getFullMethodName()))
                .containsExactlyInAnyOrder(Role.BALANCER, Role.ADMIN);
    }
}
