package ernic.p4;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the engine does not run is refused at load, in one line naming the feature and its JSON path. */
class RefusalTest {
    static final ObjectMapper M = new ObjectMapper();

    static ObjectNode router() throws IOException {
        return (ObjectNode) M.readTree(Files.readString(ProgramsTest.DIR.resolve("ipv4_router.json")));
    }

    static P4Refusal refusal(Consumer<ObjectNode> edit) throws IOException {
        ObjectNode p = router();
        edit.accept(p);
        try {
            Loader.load(p.toString());
        } catch (P4Refusal r) {
            assertThat(r.getMessage()).doesNotContain("\n");
            assertThat(r.getStackTrace()).isEmpty();
            return r;
        }
        throw new AssertionError("loaded");
    }

    /** The one-line refusal of a program's text. */
    static String refusalOf(String json) {
        try {
            Loader.load(json);
        } catch (P4Refusal r) {
            assertThat(r.getMessage()).doesNotContain("\n");
            return r.getMessage();
        }
        throw new AssertionError("loaded");
    }

    static ObjectNode action(ObjectNode p, int i) {
        return (ObjectNode) p.get("actions").get(i);
    }

    @Test
    void filesWithoutMetaAndUpToVersion224Load() throws IOException {
        ObjectNode p = router();
        p.remove("__meta__");
        assertThat(Loader.load(p.toString()).summary()).contains("table MyIngress.ipv4_lpm (lpm");
        ((ArrayNode) router().get("__meta__").get("version")).set(1, 24);
    }

    @Test
    void versions() throws IOException {
        assertThat(refusal(p -> ((ArrayNode) p.get("__meta__").get("version")).set(1, 25)).getMessage())
                .isEqualTo("unsupported: bmv2 JSON format version 2.25 (2.0 to 2.24 are supported) (at $.__meta__.version)");
        assertThat(refusal(p -> ((ArrayNode) p.get("__meta__").get("version")).set(0, 3)).path())
                .isEqualTo("$.__meta__.version");
    }

    @Test
    void features() throws IOException {
        assertThat(refusal(p -> p.putArray("meter_arrays").addObject().put("name", "m").put("type", "volts"))
                .getMessage()).isEqualTo("malformed program: meter type 'volts' (packets or bytes) (at $.meter_arrays[0].type)");
        assertThat(refusal(p -> p.putArray("extern_instances").addObject().put("name", "x").put("type", "Random"))
                .getMessage()).isEqualTo("unsupported: extern type 'Random' (v1model programs have no extern instances: a bmv2 test extern or another architecture's) (at $.extern_instances[0].type)");
        assertThat(refusal(p -> ((ObjectNode) p.get("pipelines").get(0)).put("name", "main_control")).getMessage())
                .isEqualTo("unsupported: another architecture's program: pipeline 'main_control' (v1model has ingress"
                        + " and egress) (at $.pipelines[0].name)");
        assertThat(refusal(p -> ((ObjectNode) p.get("header_types").get(0)).put("name", "psa_ingress_input_metadata_t"))
                .getMessage()).startsWith("unsupported: another architecture's program: header type"
                        + " 'psa_ingress_input_metadata_t' is PSA's");
        assertThat(refusal(p -> p.put("mystery", 1)).getMessage())
                .isEqualTo("unsupported: top-level attribute 'mystery' (at $.mystery)");
        assertThat(refusal(p -> ((ObjectNode) action(p, 1).get("primitives").get(0)).put("op", "modify_field_rng_uniform"))
                .getMessage()).startsWith("unsupported: primitive 'modify_field_rng_uniform'")
                .endsWith("(at $.actions[1].primitives[0].op)");
        assertThat(refusal(p -> ((ObjectNode) action(p, 1).get("primitives").get(0)).put("op", "_Random_read"))
                .getMessage()).startsWith("unsupported: extern method '_Random_read'");
        assertThat(refusal(p -> ((ObjectNode) p.get("calculations").get(0)).put("algo", "xxh64")).getMessage())
                .isEqualTo("unsupported: hash algorithm 'xxh64' (at $.calculations[0].algo)");
        assertThat(refusal(p -> ((ObjectNode) p.get("pipelines").get(0).get("tables").get(0)).put("type", "indirect_ws"))
                .getMessage()).contains("an indirect table without action_profile or act_prof_name");
        assertThat(refusal(p -> p.putArray("register_arrays").addObject().put("name", "r").put("id", 0)
                .put("size", 4).put("bitwidth", 128)).getMessage())
                .isEqualTo("unsupported: a register of 128 bits (1 to 64 are supported) (at $.register_arrays[0].bitwidth)");
    }

    @Test
    void expressions() throws IOException {
        // ttl = (ttl + 0xff) & 0xff with an operator bmv2 does not have.
        assertThat(refusal(p -> ((ObjectNode) action(p, 2).get("primitives").get(3).get("parameters").get(1).get("value"))
                .put("op", "**")).getMessage())
                .isEqualTo("unsupported: expression operator '**' (at $.actions[2].primitives[3].parameters[1].value.op)");
        // A comparison of a 128-bit product: more than 64 bits, refused instead of computed wrong.
        String wide = "{\"type\":\"expression\",\"value\":{\"op\":\">\",\"left\":{\"type\":\"expression\",\"value\":"
                + "{\"op\":\"*\",\"left\":{\"type\":\"field\",\"value\":[\"ethernet\",\"dstAddr\"]},\"right\":"
                + "{\"type\":\"field\",\"value\":[\"ethernet\",\"srcAddr\"]}}},\"right\":{\"type\":\"hexstr\",\"value\":\"0x1\"}}}";
        assertThat(refusal(p -> {
            try {
                ((ObjectNode) p.get("pipelines").get(0).get("conditionals").get(0)).set("expression", M.readTree(wide));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }).getMessage()).startsWith("unsupported: comparison '>' of values that do not both fit a 64-bit integer");
        assertThat(refusal(p -> ((ObjectNode) action(p, 2).get("primitives").get(1).get("parameters").get(1))
                .put("type", "bool").put("value", true)).getMessage()).contains("assigning a boolean");
    }

    @Test
    void malformedPrograms() {
        assertThatThrownBy(() -> Loader.load("{not json")).isInstanceOf(P4Refusal.class)
                .hasMessageStartingWith("malformed program: not JSON");
        assertThatThrownBy(() -> Loader.load("{\"headers\":[{\"name\":\"h\",\"id\":0,\"header_type\":\"nope\"}]}"))
                .hasMessage("malformed program: no header type 'nope' (at $.headers[0].header_type)");
    }
}
