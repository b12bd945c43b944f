package io.lastunit.common.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ServiceIdentityTest {
    @Test
    void parse_readsRoleAndName_ofALastunitUri() {
        assertThat(ServiceIdentity.parse("spiffe://lastunit/router/router-1"))
                .contains(new ServiceIdentity("router", "router-1"));
        assertThat(ServiceIdentity.parse("spiffe://lastunit/router/router-1").orElseThrow().knownRole())
                .contains(Role.ROUTER);
        assertThat(ServiceIdentity.parse("spiffe://lastunit/tenant/acme").orElseThrow().knownRole()).isEmpty();
    }

    @Test
    void parse_refusesOtherUris() {
        assertThat(ServiceIdentity.parse("spiffe://other/router/r1")).isEmpty();
        assertThat(ServiceIdentity.parse("spiffe://lastunit/router")).isEmpty();
        assertThat(ServiceIdentity.parse("spiffe://lastunit/router/r1/x")).isEmpty();
        assertThat(ServiceIdentity.parse("spiffe://lastunit/router/")).isEmpty();
        assertThat(ServiceIdentity.parse("spiffe://lastunit/ro ter/r1")).isEmpty();
        assertThat(ServiceIdentity.parse(null)).isEmpty();
    }

    @Test
    void constructor_refusesBadParts_namingThem() {
        assertThatThrownBy(() -> new ServiceIdentity("router", "a/b"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name='a/b'");
    }

    @Test
    void of_readsTheUriSan_ofAnIssuedCertificate_andNothingFromOneWithout() {
        LocalAuthority ca = LocalAuthority.create("test-ca", Duration.ofDays(1));
        var issued = ca.issue(ServiceIdentity.of(Role.BALANCER, "b1"), Duration.ofDays(1));
        assertThat(ServiceIdentity.of(issued.certificate())).contains(new ServiceIdentity("balancer", "b1"));

        var anonymous = ca.issue("nobody", null, Instant.now(), Duration.ofDays(1));
        assertThat(ServiceIdentity.of(anonymous.certificate())).isEmpty();
    }
}
