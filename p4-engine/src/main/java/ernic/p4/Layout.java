package ernic.p4;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where every header instance, stack and union of a program lives in the packet state ({@link Phv}):
 * one slot per field, headers numbered in JSON order. Each stack has one extra hidden header: an access
 * out of the stack's bounds reads and writes it, as P4 leaves such accesses undefined but harmless.
 */
final class Layout {
    final String[] headerNames;
    final HeaderType[] typeOf;
    final int[] first;
    final boolean[] metadata;
    final int[] unionOf;
    final int slots;
    final String[] stackNames;
    final int[][] stackMembers;
    final int[] stackScratch;
    final String[] unionNames;
    final int[][] unionMembers;
    /** Header union stacks: name, then member name to the header stack that holds that member of every element. */
    final Map<String, Map<String, Integer>> unionStacks;
    /** For each header stack, every stack sharing its next index (itself alone, or a union stack's members). */
    final int[][] siblings;
    private final Map<String, Integer> headerIndex = new HashMap<>();
    private final Map<String, Integer> stackIndex = new HashMap<>();
    private final Map<String, Integer> unionIndex = new HashMap<>();

    Layout(List<String> names, List<HeaderType> types, List<Boolean> meta, List<String> stacks,
           List<int[]> stackHeaders, List<String> unions, List<int[]> unionHeaders,
           Map<String, Map<String, Integer>> unionStacks) {
        this.unionStacks = unionStacks;
        int n = names.size() + stacks.size();
        headerNames = new String[n];
        typeOf = new HeaderType[n];
        metadata = new boolean[n];
        first = new int[n];
        unionOf = new int[n];
        java.util.Arrays.fill(unionOf, -1);
        for (int h = 0; h < names.size(); h++) {
            headerNames[h] = names.get(h);
            typeOf[h] = types.get(h);
            metadata[h] = meta.get(h);
            headerIndex.put(names.get(h), h);
        }
        stackNames = stacks.toArray(String[]::new);
        stackMembers = stackHeaders.toArray(int[][]::new);
        stackScratch = new int[stacks.size()];
        for (int s = 0; s < stacks.size(); s++) {
            int h = names.size() + s;
            stackScratch[s] = h;
            headerNames[h] = stacks.get(s) + "[out of bounds]";
            typeOf[h] = typeOf[stackMembers[s][0]];
            stackIndex.put(stacks.get(s), s);
        }
        siblings = new int[stacks.size()][];
        for (int s = 0; s < stacks.size(); s++) {
            siblings[s] = new int[] {s};
        }
        for (Map<String, Integer> members : unionStacks.values()) {
            int[] all = members.values().stream().mapToInt(Integer::intValue).toArray();
            for (int s : all) {
                siblings[s] = all;
            }
        }
        unionNames = unions.toArray(String[]::new);
        unionMembers = unionHeaders.toArray(int[][]::new);
        for (int u = 0; u < unionNames.length; u++) {
            unionIndex.put(unionNames[u], u);
            for (int h : unionMembers[u]) {
                unionOf[h] = u;
            }
        }
        int slot = 0;
        for (int h = 0; h < n; h++) {
            first[h] = slot;
            slot += typeOf[h].fields().length;
        }
        slots = slot;
    }

    int headers() {
        return headerNames.length;
    }

    /** The header instance index of a name, or -1. */
    int header(String name) {
        return headerIndex.getOrDefault(name, -1);
    }

    int stack(String name) {
        return stackIndex.getOrDefault(name, -1);
    }

    int union(String name) {
        return unionIndex.getOrDefault(name, -1);
    }
}
