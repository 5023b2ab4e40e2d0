package ernic.p4;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** The P4 engine's core knows nothing of ionic: only its hooks (elsewhere) do. */
class P4ArchitectureTest {
    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("ernic.p4");

    @Test
    void theEngineCoreDependsOnNoIonicPackage() {
        noClasses().that().resideInAPackage("ernic.p4..")
                .should().dependOnClassesThat().resideInAPackage("ernic.ionic..")
                .because("the loader, parser, expressions and tables are tested alone; only the hooks know ionic")
                .check(MAIN);
    }
}
