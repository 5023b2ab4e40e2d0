package ernic.model;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The model is a second, independent implementation of the driver side: it must not share a line with the
 * device (or it would share its mistakes), nor lean on the vfio-user server, whose side it plays the other end of.
 */
@AnalyzeClasses(packages = "ernic.model", importOptions = ImportOption.DoNotIncludeTests.class)
class ModelArchitectureTest {
    @ArchTest
    static final ArchRule knowsNothingOfTheDeviceNorTheServer = noClasses()
            .that().resideInAPackage("ernic.model..")
            .should().dependOnClassesThat().resideInAnyPackage("ernic.ionic..", "ernic.vfiouser.server..")
            .because("the model meets the device only on the wire (or its region handlers, through plain functions)");
}
