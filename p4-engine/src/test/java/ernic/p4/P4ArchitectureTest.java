package ernic.p4;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the P4 engine may use: the JDK, Jackson (it reads bmv2 JSON), the counters module and the common module (the
 * Internet checksum, IPv4 parsing). Nothing of the device, the vfio-user framework or the mesh: only its hooks, in
 * ionic-device, know ionic.
 */
class P4ArchitectureTest {
    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("ernic.p4");

    @Test
    void theClassesAreImported() {
        // A rule over no classes proves nothing: the importer must read this JDK's class files.
        assertThat(MAIN.contain(P4Engine.class)).isTrue();
        assertThat(MAIN.get(Loader.class).getDirectDependenciesFromSelf())
                .anyMatch(d -> d.getTargetClass().getPackageName().startsWith("com.fasterxml.jackson"));
        assertThat(MAIN.get(P4Engine.class).getDirectDependenciesFromSelf())
                .anyMatch(d -> d.getTargetClass().getPackageName().equals("ernic.counters"));
        assertThat(MAIN.get(Calc.class).getDirectDependenciesFromSelf())
                .anyMatch(d -> d.getTargetClass().getPackageName().equals("ernic.common"));
    }

    @Test
    void theEngineUsesOnlyTheJdkJacksonTheCountersAndCommon() {
        classes().that().resideInAPackage("ernic.p4..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("ernic.p4..", "java..",
                        "com.fasterxml.jackson..", "ernic.counters..", "ernic.common..")
                .because("the loader, parser, expressions and tables are tested alone; only the hooks know ionic")
                .check(MAIN);
    }
}
