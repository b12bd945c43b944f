package io.lastunit.router.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Context;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AuthorizationTest {
    static final Authenticator.Principal SHOP = new Authenticator.Principal("shop", Set.of("shop-a"), false);
    static final Authenticator.Principal OPS = new Authenticator.Principal("ops", Set.of("*"), true);

    static Failure refusal(Authenticator.Principal p, String tenant, boolean adminCall) {
        return catchThrowableOfType(Failure.class, () -> Authorization.check(p, tenant, adminCall));
    }

    @Test
    void check_allowsTheTenantsOfTheGrant_andEveryTenantForStar() {
        assertThatCode(() -> Authorization.check(SHOP, "shop-a", false)).doesNotThrowAnyException();
        assertThatCode(() -> Authorization.check(OPS, "any-shop", true)).doesNotThrowAnyException();
    }

    @Test
    void check_refusesAnotherTenant_namingTheCallerAndTheTenant() {
        Failure f = refusal(SHOP, "shop-b", false);

        assertThat(f.reason()).isEqualTo(Reason.PERMISSION_DENIED);
        assertThat(f.getMessage()).isEqualTo("caller shop may not use tenant shop-b");
    }

    @Test
    void check_refusesAnAdminCall_withoutTheAdminRole() {
        Failure f = refusal(SHOP, "shop-a", true);

        assertThat(f.reason()).isEqualTo(Reason.PERMISSION_DENIED);
        assertThat(f.getMessage()).isEqualTo("caller shop lacks the admin role");
    }

    @Test
    void check_readsTheCallerFromTheCallsContext_andRefusesACallWithoutOne() throws Exception {
        Context withCaller = Context.current().withValue(AuthInterceptor.PRINCIPAL, SHOP);

        assertThatCode(() -> withCaller.call(() -> {
            Authorization.check("shop-a", false);
            return null;
        })).doesNotThrowAnyException();
        Failure none = catchThrowableOfType(Failure.class, () -> Authorization.check("shop-a", false));
        assertThat(none.reason()).isEqualTo(Reason.UNAUTHENTICATED);
    }
}
