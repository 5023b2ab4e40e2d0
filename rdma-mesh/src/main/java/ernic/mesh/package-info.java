/**
 * The server-to-server mesh: membership, node ids, topology, GID ownership, framing, heartbeats, relay and flow
 * control, as Netty channels on the device's event loop. It carries opaque payloads and knows nothing of the device.
 *
 * <h2>Who uses it</h2>
 * It serves the remote RDMA data path of {@code ionic-device} (a QP whose destination GID another server's guest
 * owns sends there) and {@code server}, which creates the node from {@code --backend}, registers its counters
 * ({@link ernic.mesh.MeshNode#counterSet()} under {@code mesh.}, {@link ernic.mesh.MeshNode#peerCounterSets()} as
 * a family labelled {@code peer}) and writes its state to the stats file. They use the public types only:
 * {@link ernic.mesh.MeshNode} (the facade), {@link ernic.mesh.MeshListener}, {@link ernic.mesh.SendResult},
 * {@link ernic.mesh.Recall}, {@link ernic.mesh.Gid}, {@link ernic.mesh.NodeInfo}, {@link ernic.mesh.MeshConfig},
 * {@link ernic.mesh.MeshSpec}, {@link ernic.mesh.MeshSecret}, {@link ernic.mesh.MeshAddress} and the counter enums.
 * It depends on Netty, slf4j and {@code ernic.counters}, and on nothing of the device (nor may it).
 *
 * <h2>Inside</h2>
 * <ul>
 * <li>{@code MeshNode}: the public API, the listening socket, the health tick; a {@code Side} per role does what
 * differs: {@code ManagerSide} (registrations, broadcast, relay) and {@code WorkerSide} (registration, topology,
 * direct handshakes). A side is given what it uses, not the node: {@code SideParts} (this node as a
 * {@code ThisNode}: id, instance, port, claims; and the {@code Links}, {@code Router}, {@code GidTable}, counters,
 * listeners, configuration, clock and warnings).</li>
 * <li>{@code ManagerTable}: the manager's node table in plain Java (register, evict, dead nodes, the broadcast
 * diff); it returns the frames to send.</li>
 * <li>{@code WorkerDialer}: a worker's outgoing connections (the manager, the direct ones), with reconnects.</li>
 * <li>{@code GidTable}: GID → node as the manager decided it; {@code GidClaims}: the manager's decision from every
 * node's claims; {@code LearnedGids}: what a node learned from its guest's source addresses, with the cap and the
 * ageing; {@code Router}: which connection carries a message.</li>
 * <li>{@code Links} and {@code MeshLink}: the connections, their events, send queue, heartbeat slots and health;
 * {@code Sockets}: their options and pipeline; {@code FrameReader}: the frames cut from a connection's bytes, a
 * large one read straight into a buffer of its own length.</li>
 * <li>{@code MeshAuth}: the secret, the handshake's proofs and nonces, the refusals by cause; {@code AuthHandshake}
 * and {@code NoSecretGuard}: the first handler of each connection.</li>
 * <li>{@code Wire}: every frame type as a record, encoded and decoded side by side; decoding checks every field
 * (a peer is hostile: a bad frame is a counted protocol error, never an exception out of the loop).</li>
 * </ul>
 *
 * <h2>Use</h2>
 * <pre>{@code
 * MeshNode node = MeshSpec.parse("tcp:worker:[fe80::1%eth0]:5000")
 *         .create(deviceLoop, MeshConfig.defaults().withSendTimeoutFromEnvironment());
 * node.addListener(new MeshListener() {
 *     public void onMessage(int source, ByteBuf payload) { ... payload.release(); }   // on the loop
 *     public void onWritable(int nodeId) { ... retry what was BUSY ... }
 * });
 * node.start();
 * node.advertiseGids(Gid.parseList(System.getenv("ERNIC_TCP_GUEST_GIDS")));
 * node.learnGid(hi, lo);   // on the loop: the guest sent from this address (learned, aged, at most 64)
 * // on the loop:
 * switch (node.send(peer, payload)) { case QUEUED -> ...; case BUSY -> keep it, retry on onWritable;
 *                                     case NO_ROUTE -> complete in error at once; }
 * node.send(peer, payload, recall);   // recall.recalled(peer, payload), asked just before it is written: true takes
 *                                     // it back (released unsent)
 * node.ownerOf(gid);   // OptionalInt: the node that owns the GID
 * }</pre>
 *
 * <h2>One thread</h2>
 * A {@link ernic.mesh.MeshNode} lives on the event loop it is given: its channels, its timer (heartbeats, dead-node
 * detection, send time-outs, reconnects) and its state. Its clock is the loop's {@link io.netty.util.concurrent.Ticker}
 * (nothing here reads the system clock), so tests drive time with a mock ticker. What the C design did with accept, receive, send, health and
 * broadcast threads is done here with a server channel, channel reads, a {@link io.netty.channel.PendingWriteQueue}
 * under the channel's write watermarks (sends answer BUSY above the high one; replies have a room of their own),
 * {@code autoRead} (receive-side back-pressure, and the manager holding back a sender whose relay target is full),
 * and one scheduled task.
 *
 * <h2>Rules</h2>
 * <ul>
 * <li>The manager is node 0. Workers get ids in arrival order, never reused. An instance is known by the random
 * nonce it sends when it registers: the same instance coming back keeps its id, a restarted one gets a new id.</li>
 * <li>The table holds {@link ernic.mesh.MeshConfig#maxNodes()} nodes (64). A new node in a full table evicts the
 * node dead longest, or is refused if none is dead (it keeps trying).</li>
 * <li>Workers connect directly to each other, the lower id to the higher, and reconnect when dropped; without a
 * direct connection a payload goes by way of the manager.</li>
 * <li>On every connection a node that has heard nothing for its interval sends a heartbeat (intervals are per node
 * and needn't match) and drops the connection after three silent intervals. The manager then marks the node
 * dead; a worker reconnects to the manager.</li>
 * <li>A connection with queued data that sends nothing for the send time-out (ERNIC_TCP_SEND_TIMEOUT_MS, 10 s; the
 * manager uses half) is shut down. Heartbeats and their answers go ahead of queued data; at most one of each
 * waits.</li>
 * <li>Each node claims GIDs, declared ({@code advertiseGids}) and learned from its guest ({@code learnGid}); the
 * manager decides who owns each (a live node before a dead one, declared before learned, then the first claim:
 * the first owner keeps it; a conflict is counted and logged), sends every node the changed nodes' owned sets,
 * and a newly registered node the whole table.</li>
 * <li>Registration and the worker-to-worker handshake carry a magic number and a version; a mismatch is refused,
 * logged and counted ({@code mesh.refusedHandshakes}; {@code node.refusedHandshakes} in the stats file).</li>
 * <li>With a secret ({@link ernic.mesh.MeshConfig#secret()}, {@code secret=FILE} in a {@link ernic.mesh.MeshSpec}),
 * every connection authenticates before anything else: both ends prove they hold it (HMAC-SHA256 over both ends'
 * fresh nonces, the prover's role and the versions), and nothing a peer sends before its proof reaches the mesh. A
 * peer that fails is closed, counted by cause ({@code mesh.node.auth*}) and logged once per cause. Without a secret
 * the node logs one WARN that the mesh is unauthenticated.</li>
 * </ul>
 * The wire format is described in {@code Wire}, the authentication in {@code MeshAuth}: a
 * {@code AuthHandshake} (or, without a secret, a {@code NoSecretGuard}) is the first handler of each connection
 * and removes itself when it is done, so the frames after it pass untouched.
 */
package ernic.mesh;
