package ernic.ionic;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** The package rules of ionic-device (see package-info.java of ernic.ionic). */
class IonicArchitectureTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("ernic.ionic");

    private static final String[] SHARED = {"ernic.ionic.base..", "ernic.ionic.layout..", "ernic.ionic.regs..",
            "ernic.ionic.fault..", "ernic.ionic.profile.."};

    /** One slice per package, the root package included. */
    private static final SliceAssignment BY_PACKAGE = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
            return c.getPackageName().startsWith("ernic.ionic") ? SliceIdentifier.of(c.getPackageName())
                    : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "packages of ernic.ionic";
        }
    };

    @Test
    void theClassesAreImported() {
        // A rule over no classes proves nothing: the importer must read this JDK's class files.
        assertThat(MAIN.contain(IonicDevice.class)).isTrue();
        assertThat(MAIN.get(IonicDevice.class).getDirectDependenciesFromSelf())
                .anyMatch(d -> d.getTargetClass().getPackageName().equals("ernic.ionic.rdma"));
    }

    @Test
    void noCyclesAmongThePackages() {
        slices().assignedFrom(BY_PACKAGE).should().beFreeOfCycles().check(MAIN);
    }

    @Test
    void ethDoesNotUseRdma() {
        noClasses().that().resideInAPackage("ernic.ionic.eth..")
                .should().dependOnClassesThat().resideInAPackage("ernic.ionic.rdma..").check(MAIN);
    }

    @Test
    void rdmaDoesNotUseEth() {
        noClasses().that().resideInAPackage("ernic.ionic.rdma..")
                .should().dependOnClassesThat().resideInAPackage("ernic.ionic.eth..").check(MAIN);
    }

    @Test
    void neitherSideUsesTheRootPackage() {
        noClasses().that().resideInAnyPackage("ernic.ionic.eth..", "ernic.ionic.rdma..")
                .should().dependOnClassesThat().resideInAPackage("ernic.ionic").check(MAIN);
    }

    @Test
    void theSharedPackagesUseNeitherSideNorTheRoot() {
        noClasses().that().resideInAnyPackage(SHARED)
                .should().dependOnClassesThat().resideInAnyPackage("ernic.ionic", "ernic.ionic.eth..", "ernic.ionic.rdma..")
                .check(MAIN);
    }

    @Test
    void theTraceFileSideKnowsNothingOfTheDevice() {
        noClasses().that().resideInAPackage("ernic.ionic.trace..")
                .should().dependOnClassesThat().resideInAnyPackage("ernic.ionic", "ernic.ionic.rdma..", "ernic.ionic.eth..",
                        "ernic.ionic.base..", "ernic.ionic.layout..")
                .because("the frames and the pcap file are filled by ernic.ionic.rdma, not read from it")
                .check(MAIN);
    }

    @Test
    void theDeviceNamesNoInProcessPeer() {
        // The NVMe-oF target, the S3 store and their IP endpoint plug in through ernic.attach; the server wires them.
        noClasses().that().resideInAPackage("ernic.ionic..")
                .should().dependOnClassesThat().resideInAnyPackage("ernic.nvmeof..", "ernic.s3..", "ernic.ipstack..")
                .because("an in-process peer is an ernic.attach.Attachment or FrameClaimer, which the core iterates")
                .check(MAIN);
    }

    /** The classes of {@code packageIdentifier} but the {@code allowed} ones: what a rule allowing only those forbids. */
    static DescribedPredicate<JavaClass> inPackageExcept(String packageIdentifier,
            DescribedPredicate<? super JavaClass> allowed) {
        return JavaClass.Predicates.resideInAPackage(packageIdentifier).and(DescribedPredicate.not(allowed));
    }

    @Test
    void ofTheP4EngineTheDataPathUsesOnlyItsFp8Arithmetic() {
        noClasses().that().resideInAPackage("ernic.ionic.rdma..")
                .should().dependOnClassesThat(inPackageExcept("ernic.p4..",
                        JavaClass.Predicates.belongToAnyOf(ernic.p4.Fp8.class)))
                .because("the WQE hook's externs do fp8 arithmetic; the engine itself meets rdma only in p4hook")
                .check(MAIN);
    }

    @Test
    void theEngineMeetsTheDeviceOnlyInItsHooks() {
        noClasses().that().resideInAnyPackage("ernic.ionic", "ernic.ionic.eth..", "ernic.ionic.base..",
                        "ernic.ionic.layout..", "ernic.ionic.regs..", "ernic.ionic.fault..", "ernic.ionic.profile..",
                        "ernic.ionic.trace..")
                .should().dependOnClassesThat().resideInAPackage("ernic.p4..")
                .because("eth and rdma define the interfaces the hooks implement; p4hook is where the engine meets them")
                .check(MAIN);
    }

    @Test
    void baseUsesNoOtherPackageOfTheDevice() {
        noClasses().that().resideInAPackage("ernic.ionic.base..")
                .should().dependOnClassesThat(inPackageExcept("ernic.ionic..",
                        JavaClass.Predicates.resideInAPackage("ernic.ionic.base..")))
                .because("base is where Ethernet and RDMA meet: the DMA engine, the handler interfaces, the identity")
                .check(MAIN);
    }
}
