package io.lastunit.admin;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.lastunit.testkit.HouseRules;
import org.junit.jupiter.api.Test;

/** docs/architecture.md's house rules for the admin tool. */
class HouseRulesTest {
    private static final JavaClasses CLASSES = HouseRules.mainClasses("io.lastunit.admin");

    @Test
    void micronautOnlyInWiring() {
        HouseRules.micronautOnlyInWiring().check(CLASSES);
    }

    @Test
    void theMovePlanIsPure() {
        HouseRules.pure("io.lastunit.admin.move.plan..").forEach(r -> r.check(CLASSES));
    }

    @Test
    void noPackageCycles() {
        HouseRules.noPackageCycles("io.lastunit.admin").check(CLASSES);
    }
}
