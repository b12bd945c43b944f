package io.lastunit.balancer.grpc;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PullValidationTest {
    private static final PullRequest OK = PullRequest.newBuilder().setTenantId("acme").setItemId("shoe")
            .setRegion("eu").setQuantity(1).build();

    @Test
    void aWellFormedPull_passes() {
        assertThatCode(() -> BalancerGrpcService.validate(OK)).doesNotThrowAnyException();
        assertThatCode(() -> BalancerGrpcService.validate(OK.toBuilder().setQuantity(1_000_000_000L).build()))
                .doesNotThrowAnyException();
    }

    @ParameterizedTest
    @CsvSource({
        "tenant_id, '', shoe, eu, 1",
        "tenant_id, 'a b', shoe, eu, 1",
        "item_id, acme, '', eu, 1",
        "region, acme, shoe, '', 1",
        "quantity, acme, shoe, eu, 0",
        "quantity, acme, shoe, eu, -4",
        "quantity, acme, shoe, eu, 1000000001"})
    void aBadField_isRefusedByName(String field, String tenant, String item, String region, long qty) {
        Failure f = catchThrowableOfType(Failure.class, () -> BalancerGrpcService.validate(PullRequest.newBuilder()
                .setTenantId(tenant).setItemId(item).setRegion(region).setQuantity(qty).build()));
        assertThat(f.reason()).isEqualTo(Reason.INVALID_FIELD);
        assertThat(f.metadata()).containsEntry("field", field);
    }

    @Test
    void overLongIds_areRefused() {
        Failure f = catchThrowableOfType(Failure.class,
                () -> BalancerGrpcService.validate(OK.toBuilder().setTenantId("t".repeat(65)).build()));
        assertThat(f.metadata()).containsEntry("field", "tenant_id");
        f = catchThrowableOfType(Failure.class,
                () -> BalancerGrpcService.validate(OK.toBuilder().setRegion("r".repeat(33)).build()));
        assertThat(f.metadata()).containsEntry("field", "region");
    }
}
