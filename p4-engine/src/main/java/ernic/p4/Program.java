package ernic.p4;

import java.util.List;
import java.util.Map;

/** A loaded bmv2 JSON program, ready to run: built by {@link Loader}, run by {@link P4Engine}. */
final class Program {
    record Checksum(String name, Expr.Field target, Calc calc, boolean verify, boolean update, Expr ifCond) {
    }

    String name;
    String compiler;
    /** {@code config_options}: name to value, in JSON order. */
    Map<String, String> configOptions;
    Layout layout;
    Externs externs;
    StdMeta std;
    Parser parser;
    Parser.Errors errors;
    Parser.Deparser deparser;
    Node ingress;
    Node egress;
    List<Table> tables;
    Map<String, Action> actions;
    Map<String, Table.Profile> profiles;
    Map<String, Parser.ParseVset> vsets;
    Map<String, Calc> calcs;
    List<Checksum> checksums;
    /** Direct meter arrays by name, as JSON, until their tables are loaded. */
    Map<String, J> directMeters;
    /** Field lists (clone, resubmit, recirculate) and learn lists (digests) by id. */
    Map<Integer, FieldList> fieldLists;
    Map<Integer, FieldList> learnLists;
    /**
     * A mirror session: its clones go to {@code port} (mirroring_add) or to multicast group {@code mgid}
     * (mirroring_add_mc); the other is -1.
     */
    record Mirror(int port, int mgid) {
    }

    /** Direct counters (counter_arrays with is_direct): name to the table they count on (its binding). */
    final Map<String, String> directCounters = new java.util.HashMap<>();
    /** Mirror sessions by id. */
    final Map<Integer, Mirror> mirrorSessions = new java.util.HashMap<>();
    /** The packet replication engine (mc_* commands): multicast groups and their nodes. */
    final Multicast multicast = new Multicast();
    int headerTypes;
    int parseStates;
    int conditionals;
}
