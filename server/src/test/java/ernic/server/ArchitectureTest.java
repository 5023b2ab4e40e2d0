package ernic.server;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noFields;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The whole server's shape, as rules over every module's main code (docs/architecture.md): no cycle
 * among the packages, the libraries know no device, Ethernet and RDMA meet only in the device's shared
 * packages, and server-side time comes from the event loop's clock.
 */
@AnalyzeClasses(packages = "ernic", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {
    @ArchTest
    static void noCycleAmongTheErnicPackages(JavaClasses main) {
        slices().matching("ernic.(**)").should().beFreeOfCycles().check(main);
    }

    @ArchTest
    static void vfioUserAndTheMeshKnowNothingOfIonic(JavaClasses main) {
        noClasses().that().resideInAnyPackage("ernic.vfiouser..", "ernic.mesh..", "ernic.counters..")
                .should().dependOnClassesThat().resideInAnyPackage("ernic.ionic..", "ernic.server..")
                .check(main);
        noClasses().that().resideInAnyPackage("ernic.mesh..")
                .should().dependOnClassesThat().resideInAnyPackage("ernic.vfiouser..")
                .check(main);
    }

    @ArchTest
    static void ethernetAndRdmaMeetOnlyInTheSharedPackages(JavaClasses main) {
        noClasses().that().resideInAPackage("ernic.ionic.eth..")
                .should().dependOnClassesThat().resideInAPackage("ernic.ionic.rdma..").check(main);
        noClasses().that().resideInAPackage("ernic.ionic.rdma..")
                .should().dependOnClassesThat().resideInAPackage("ernic.ionic.eth..").check(main);
    }

    @ArchTest
    static void noCounterIsAPublicMutableField(JavaClasses main) {
        noFields().that().arePublic().should().haveRawType(java.util.concurrent.atomic.AtomicLong.class)
                .orShould().haveRawType(java.util.concurrent.atomic.AtomicInteger.class)
                .orShould().haveRawType(java.util.concurrent.atomic.LongAdder.class)
                .orShould().haveRawType(ernic.counters.Counters.class)
                .because("counters are enum-described sets in the registry (issue 32), read through a snapshot")
                .check(main);
    }

    @ArchTest
    static void prometheusObjectsLiveOnlyInTheMetricsEndpoint(JavaClasses main) {
        noClasses().that().resideOutsideOfPackage("ernic.server.metrics..")
                .should().dependOnClassesThat().resideInAPackage("io.prometheus..")
                .because("the data path counts in plain longs; scrapes build Prometheus objects from a snapshot")
                .check(main);
    }

    @ArchTest
    static void theServerSideReadsTimeOnlyFromTheClock(JavaClasses main) {
        // vfio-user-protocol's own ArchitectureTest holds the library's server side to the same rule.
        noClasses().that().resideInAnyPackage("ernic.ionic..", "ernic.mesh..", "ernic.server..", "ernic.counters..",
                        "ernic.p4..")
                .should().callMethod(System.class, "nanoTime")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .because("device-thread time comes from the event loop's Ticker, which tests drive")
                .check(main);
    }

    @ArchTest
    static void noPackageIsNamedTarget(JavaClasses main) {
        // Maven-aware tools take a folder named target for build output and skip what is in it.
        noClasses().should().resideInAPackage("..target..").check(main);
    }

    @ArchTest
    static void theSmallLibrariesDependOnNoneOfOurs(JavaClasses main) {
        noClasses().that().resideInAnyPackage("ernic.common..", "ernic.attach..")
                .should().dependOnClassesThat(JavaClass.Predicates.resideInAPackage("ernic..")
                        .and(DescribedPredicate.not(JavaClass.Predicates.resideInAnyPackage("ernic.common..",
                                "ernic.attach.."))))
                .because("common and rdma-attach are what every side may use: they may use nothing of a side")
                .check(main);
    }
}
