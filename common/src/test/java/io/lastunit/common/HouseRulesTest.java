package io.lastunit.common;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.lastunit.common.tls.AllowList;
import io.lastunit.common.tls.Role;
import io.lastunit.common.tls.ServiceIdentity;
import io.lastunit.common.topology.Placement;
import io.lastunit.common.topology.RestorePlan;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyExports;
import io.lastunit.testkit.HouseRules;
import org.junit.jupiter.api.Test;

/** docs/architecture.md's house rules for the shared library. */
class HouseRulesTest {
    private static final JavaClasses CLASSES = HouseRules.mainClasses("io.lastunit.common");

    @Test
    void micronautOnlyInWiring() {
        HouseRules.micronautOnlyInWiring().check(CLASSES);
    }

    @Test
    void keysAndTopologyValuesArePure() {
        HouseRules.pure("io.lastunit.common.keys..").forEach(r -> r.check(CLASSES));
        HouseRules.pureClasses(Placement.class, Topology.class, RestorePlan.class, TopologyExports.class).forEach(r -> r.check(CLASSES));
        // Who may call what is decided from values: the interceptor does the I/O.
        HouseRules.pureClasses(AllowList.class, Role.class, ServiceIdentity.class).forEach(r -> r.check(CLASSES));
    }

    @Test
    void noPackageCycles() {
        HouseRules.noPackageCycles("io.lastunit.common").check(CLASSES);
    }
}
