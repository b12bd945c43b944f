package io.lastunit.balancer;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.lastunit.testkit.HouseRules;
import org.junit.jupiter.api.Test;

/** docs/architecture.md's house rules for the balancer. */
class HouseRulesTest {
    private static final JavaClasses CLASSES = HouseRules.mainClasses("io.lastunit.balancer");

    @Test
    void micronautOnlyInWiring() {
        HouseRules.micronautOnlyInWiring().check(CLASSES);
    }

    @Test
    void thePlanIsPure() {
        HouseRules.pure("io.lastunit.balancer.plan..").forEach(r -> r.check(CLASSES));
    }

    @Test
    void noPackageCycles() {
        HouseRules.noPackageCycles("io.lastunit.balancer").check(CLASSES);
    }
}
