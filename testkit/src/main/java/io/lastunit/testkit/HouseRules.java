package io.lastunit.testkit;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.time.Clock;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDateTime;
import java.util.List;

/**
 * The house rules of docs/architecture.md, checked on a module's compiled main classes (each
 * module's {@code HouseRulesTest} names its root package and its pure packages):
 * <ul>
 *   <li>Micronaut only in {@code wiring} packages and the {@code *Main} classes;</li>
 *   <li>pure packages (decisions apart from I/O) use no {@code java.sql}, no {@code io.grpc},
 *       no Micronaut, no Curator, and read no clock: time comes in as a value;</li>
 *   <li>no cycles between the packages under the root.</li>
 * </ul>
 */
public final class HouseRules {
    private HouseRules() {
    }

    /** The module's main classes under {@code rootPackage} (tests and jars excluded). */
    public static JavaClasses mainClasses(String rootPackage) {
        return new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(rootPackage);
    }

    /** Micronaut stays in the wiring: everything else is plain Java that a test can build. */
    public static ArchRule micronautOnlyInWiring() {
        return noClasses().that().resideOutsideOfPackage("..wiring..").and().haveSimpleNameNotEndingWith("Main")
                .should().dependOnClassesThat().resideInAPackage("io.micronaut..")
                .because("Micronaut wires services; the classes it wires are plain Java (docs/architecture.md)");
    }

    /** A pure package: no database, no network, no framework, no clock. */
    public static List<ArchRule> pure(String... packages) {
        return pure(JavaClass.Predicates.resideInAnyPackage(packages));
    }

    /** Pure classes (with their nested classes) in a package that also holds I/O. */
    public static List<ArchRule> pureClasses(Class<?>... classes) {
        return pure(JavaClass.Predicates.belongToAnyOf(classes));
    }

    private static List<ArchRule> pure(DescribedPredicate<JavaClass> which) {
        return List.of(
                noClasses().that(which)
                        .should().dependOnClassesThat().resideInAnyPackage("java.sql..", "javax.sql..", "io.grpc..",
                                "io.micronaut..", "org.apache.curator..", "org.apache.zookeeper..", "com.zaxxer..")
                        .because("decisions are pure: I/O stays outside them"),
                noClasses().that(which)
                        .should().callMethod(System.class, "currentTimeMillis")
                        .orShould().callMethod(System.class, "nanoTime")
                        .orShould().callMethod(Instant.class, "now")
                        .orShould().callMethod(LocalDateTime.class, "now")
                        .orShould().dependOnClassesThat().areAssignableTo(Clock.class)
                        .orShould().dependOnClassesThat().areAssignableTo(InstantSource.class)
                        .because("a pure decision takes the time as a value, so a test fixes it"));
    }

    /** No cycles between the packages directly under {@code rootPackage} (and their sub-packages). */
    public static ArchRule noPackageCycles(String rootPackage) {
        return slices().matching(rootPackage + ".(*)..").should().beFreeOfCycles();
    }
}
