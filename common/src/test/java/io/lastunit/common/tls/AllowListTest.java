package io.lastunit.common.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AllowListTest {
    static final AllowList LIST = AllowList.builder("shard node s1")
            .service("lastunit.inventory.v1.InventoryService", Role.ROUTER)
            .method("lastunit.shard.v1.ShardService/TransferOut", Role.BALANCER)
            .method("lastunit.shard.v1.ShardService/ListLevels", Role.BALANCER, Role.ADMIN)
            .build();

    @Test
    void allows_theRolesNamed_forAMethodOrItsService() {
        assertThat(LIST.refusal("lastunit.inventory.v1.InventoryService/CreateItem", id("router"))).isEmpty();
        assertThat(LIST.refusal("lastunit.shard.v1.ShardService/TransferOut", id("balancer"))).isEmpty();
        assertThat(LIST.refusal("lastunit.shard.v1.ShardService/ListLevels", id("admin"))).isEmpty();
    }

    @Test
    void refuses_otherRoles_namingCallerMethodAndWhoMay() {
        assertThat(LIST.refusal("lastunit.inventory.v1.InventoryService/CreateItem", id("balancer")))
                .hasValueSatisfying(m -> assertThat(m).contains("shard node s1 refuses",
                        "InventoryService/CreateItem", "spiffe://lastunit/balancer/x", "only router may"));
        assertThat(LIST.refusal("lastunit.shard.v1.ShardService/TransferOut", id("router")))
                .hasValueSatisfying(m -> assertThat(m).contains("only balancer may"));
    }

    @Test
    void refuses_anUnknownRole_everywhere() {
        assertThat(LIST.refusal("lastunit.inventory.v1.InventoryService/CreateItem", id("tenant")))
                .hasValueSatisfying(m -> assertThat(m).contains("role 'tenant', which lastunit does not know"));
    }

    @Test
    void closes_aMethodNamedNowhere_toEveryone() {
        assertThat(LIST.rolesFor("lastunit.shard.v1.ShardService/DropTenant")).isEmpty();
        assertThat(LIST.refusal("lastunit.shard.v1.ShardService/DropTenant", id("admin")))
                .hasValueSatisfying(m -> assertThat(m).contains("no role may call it"));
    }

    @Test
    void opens_healthAndReflection_toAnyone() {
        assertThat(LIST.isOpen("grpc.health.v1.Health/Check")).isTrue();
        assertThat(LIST.isOpen("grpc.reflection.v1.ServerReflection/ServerReflectionInfo")).isTrue();
        assertThat(LIST.isOpen("grpc.health.v1.HealthX/Check")).isFalse();
        assertThat(LIST.refusal("grpc.health.v1.Health/Check", id("tenant"))).isEmpty();
    }

    @Test
    void builder_refusesAnEntryWithoutRoles_orNamedTwice() {
        assertThatThrownBy(() -> AllowList.builder("x").method("a.B/C"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one role");
        assertThatThrownBy(() -> AllowList.builder("x").method("a.B/C", Role.ADMIN).method("a.B/C", Role.ROUTER))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("named twice");
        assertThatThrownBy(() -> AllowList.builder("x").method("a.B", Role.ADMIN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not package.Service/Method");
    }

    private static ServiceIdentity id(String role) {
        return new ServiceIdentity(role, "x");
    }
}
