package ernic.p4;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the P4 engine may use: the JDK, Jackson (it reads bmv2 JSON), the counters module and the common module (the
 * Internet checksum, IPv4 parsing). Nothing of the device, the vfio-user framework or the mesh: only its hooks, in
 * ionic-device, know ionic.
 */
@AnalyzeClasses(packages = "ernic.p4", importOptions = ImportOption.DoNotIncludeTests.class)
class P4ArchitectureTest {
    @ArchTest
    static void theClassesAreImported(JavaClasses main) {
        // A rule over no classes proves nothing: the importer must read this JDK's class files.
        assertThat(main.contain(P4Engine.class)).isTrue();
        assertThat(main.get(Loader.class).getDirectDependenciesFromSelf())
                .anyMatch(d -> d.getTargetClass().getPackageName().startsWith("com.fasterxml.jackson"));
        assertThat(main.get(P4Engine.class).getDirectDependenciesFromSelf())
                .anyMatch(d -> d.getTargetClass().getPackageName().equals("ernic.counters"));
        assertThat(main.get(Calc.class).getDirectDependenciesFromSelf())
                .anyMatch(d -> d.getTargetClass().getPackageName().equals("ernic.common"));
    }

    @ArchTest
    static void theEngineUsesOnlyTheJdkJacksonTheCountersAndCommon(JavaClasses main) {
        classes().that().resideInAPackage("ernic.p4..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("ernic.p4..", "java..",
                        "com.fasterxml.jackson..", "ernic.counters..", "ernic.common..")
                .because("the loader, parser, expressions and tables are tested alone; only the hooks know ionic")
                .check(main);
    }
}
