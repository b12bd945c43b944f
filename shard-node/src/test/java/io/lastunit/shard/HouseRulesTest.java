package io.lastunit.shard;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.lastunit.testkit.HouseRules;
import org.junit.jupiter.api.Test;

/** docs/architecture.md's house rules for the shard node. */
class HouseRulesTest {
    private static final JavaClasses CLASSES = HouseRules.mainClasses("io.lastunit.shard");

    @Test
    void micronautOnlyInWiring() {
        HouseRules.micronautOnlyInWiring().check(CLASSES);
    }

    @Test
    void theDeciderIsPure() {
        HouseRules.pure("io.lastunit.shard.decide..").forEach(r -> r.check(CLASSES));
    }

    @Test
    void theSeatDeciderIsPure() {
        HouseRules.pure("io.lastunit.shard.seats.plan..").forEach(r -> r.check(CLASSES));
    }

    @Test
    void noPackageCycles() {
        HouseRules.noPackageCycles("io.lastunit.shard").check(CLASSES);
    }
}
