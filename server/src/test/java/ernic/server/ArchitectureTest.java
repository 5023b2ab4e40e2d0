package ernic.server;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noFields;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The whole server's shape, as rules over every module's main code (docs/architecture.md): no cycle
 * among the packages, the libraries know no device, Ethernet and RDMA meet only in the device's shared
 * packages, and server-side time comes from the event loop's clock.
 */
class ArchitectureTest {
    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("ernic");

    @Test
    void noCycleAmongTheErnicPackages() {
        slices().matching("ernic.(**)").should().beFreeOfCycles().check(MAIN);
    }

    @Test
    void vfioUserAndTheMeshKnowNothingOfIonic() {
        noClasses().that().resideInAnyPackage("ernic.vfiouser..", "ernic.mesh..", "ernic.counters..")
                .should().dependOnClassesThat().resideInAnyPackage("ernic.ionic..", "ernic.server..")
                .check(MAIN);
        noClasses().that().resideInAnyPackage("ernic.mesh..")
                .should().dependOnClassesThat().resideInAnyPackage("ernic.vfiouser..")
                .check(MAIN);
    }

    @Test
    void ethernetAndRdmaMeetOnlyInTheSharedPackages() {
        noClasses().that().resideInAPackage("ernic.ionic.eth..")
                .should().dependOnClassesThat().resideInAPackage("ernic.ionic.rdma..").check(MAIN);
        noClasses().that().resideInAPackage("ernic.ionic.rdma..")
                .should().dependOnClassesThat().resideInAPackage("ernic.ionic.eth..").check(MAIN);
    }

    @Test
    void noCounterIsAPublicMutableField() {
        noFields().that().arePublic().should().haveRawType(java.util.concurrent.atomic.AtomicLong.class)
                .orShould().haveRawType(java.util.concurrent.atomic.AtomicInteger.class)
                .orShould().haveRawType(java.util.concurrent.atomic.LongAdder.class)
                .orShould().haveRawType(ernic.counters.Counters.class)
                .because("counters are enum-described sets in the registry (issue 32), read through a snapshot")
                .check(MAIN);
    }

    @Test
    void prometheusObjectsLiveOnlyInTheMetricsEndpoint() {
        noClasses().that().resideOutsideOfPackage("ernic.server.metrics..")
                .should().dependOnClassesThat().resideInAPackage("io.prometheus..")
                .because("the data path counts in plain longs; scrapes build Prometheus objects from a snapshot")
                .check(MAIN);
    }

    @Test
    void theServerSideReadsTimeOnlyFromTheClock() {
        noClasses().that().resideInAnyPackage("ernic.vfiouser.server..", "ernic.vfiouser.transport..",
                        "ernic.vfiouser.wire..", "ernic.vfiouser.pci..", "ernic.vfiouser.sys..", "ernic.ionic..",
                        "ernic.mesh..", "ernic.server..", "ernic.counters..", "ernic.p4..")
                .should().callMethod(System.class, "nanoTime")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .because("device-thread time comes from the event loop's Ticker, which tests drive")
                .check(MAIN);
    }

    @Test
    void noPackageIsNamedTarget() {
        // Maven-aware tools take a folder named target for build output and skip what is in it.
        noClasses().should().resideInAPackage("..target..").check(MAIN);
    }

    @Test
    void theSmallLibrariesDependOnNoneOfOurs() {
        noClasses().that().resideInAnyPackage("ernic.common..", "ernic.attach..")
                .should().dependOnClassesThat(JavaClass.Predicates.resideInAPackage("ernic..")
                        .and(DescribedPredicate.not(JavaClass.Predicates.resideInAnyPackage("ernic.common..",
                                "ernic.attach.."))))
                .because("common and rdma-attach are what every side may use: they may use nothing of a side")
                .check(MAIN);
    }
}
