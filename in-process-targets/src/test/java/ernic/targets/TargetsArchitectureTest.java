package ernic.targets;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import ernic.nvmeof.NvmeofAttachment;
import ernic.s3.S3Store;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/** The rules of the in-process targets (docs/architecture.md): they see the device only through ernic.attach. */
class TargetsArchitectureTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("ernic.nvmeof", "ernic.s3", "ernic.ipstack");

    @Test
    void theClassesAreImported() {
        assertThat(MAIN.contain(NvmeofAttachment.class)).isTrue();
        assertThat(MAIN.contain(S3Store.class)).isTrue();
    }

    @Test
    void theTargetsSeeTheDeviceOnlyThroughTheAttachmentInterfaces() {
        classes().that().resideInAnyPackage("ernic.nvmeof..", "ernic.s3..", "ernic.ipstack..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "javax..", "ernic.attach..",
                        "ernic.counters..", "ernic.common..", "ernic.nvmeof..", "ernic.s3..", "ernic.ipstack..",
                        "io.netty.util.concurrent..", "org.slf4j..")
                .because("a target is tested with a byte array standing in for guest memory")
                .check(MAIN);
    }

    @Test
    void theTargetsAreIndependentAndTheIpStackServesBoth() {
        noClasses().that().resideInAPackage("ernic.nvmeof..").should().dependOnClassesThat()
                .resideInAPackage("ernic.s3..").check(MAIN);
        noClasses().that().resideInAPackage("ernic.s3..").should().dependOnClassesThat()
                .resideInAPackage("ernic.nvmeof..").check(MAIN);
        noClasses().that().resideInAPackage("ernic.ipstack..").should().dependOnClassesThat()
                .resideInAnyPackage("ernic.nvmeof..", "ernic.s3..").check(MAIN);
    }
}
