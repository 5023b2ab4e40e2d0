package ernic.vfiouser;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** The shape of the vfio-user library, as rules (see the package-info of each package). */
class ArchitectureTest {
    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("ernic.vfiouser");
    static final String[] SERVER_SIDE = {"ernic.vfiouser.server..", "ernic.vfiouser.transport..",
            "ernic.vfiouser.wire..", "ernic.vfiouser.pci..", "ernic.vfiouser.sys..", "ernic.vfiouser.sample.."};

    @Test
    void noCycleAmongThePackages() {
        slices().matching("ernic.vfiouser.(*)..").should().beFreeOfCycles().check(MAIN);
    }

    @Test
    void theServerSideTakesTimeFromTheLoopNotFromTheSystem() {
        noClasses().that().resideInAnyPackage(SERVER_SIDE)
                .should().callMethod(System.class, "nanoTime")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .because("server-side time comes from the event loop's Ticker, so tests can drive it")
                .check(MAIN);
    }

    @Test
    void nothingOnTheServerSideUsesTheClient() {
        noClasses().that().resideInAnyPackage(SERVER_SIDE)
                .should().dependOnClassesThat().resideInAPackage("ernic.vfiouser.client..")
                .check(MAIN);
    }

    @Test
    void theLibraryKnowsNoDevice() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("ernic.ionic..", "ernic.mesh..")
                .check(MAIN);
    }
}
