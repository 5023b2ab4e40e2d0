package ernic.model.rdma;

/** An address handle (CREATE_AH) for UD sends. */
public record Ah(int id, Path path) {}
