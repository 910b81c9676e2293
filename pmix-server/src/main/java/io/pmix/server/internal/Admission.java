package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.BufferType;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.wire.ClientReply;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.ReplyLayout;
import io.pmix.common.internal.wire.ToolReply;
import io.pmix.server.HostModule;
import io.pmix.server.ServerOptions;
import io.pmix.server.internal.gds.StoreWrites;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.PeerLifecycle;
import io.pmix.server.internal.lifecycle.RankInfo;
import io.pmix.server.internal.lifecycle.Registry;
import java.lang.System.Logger.Level;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The connect decision (docs/transport.md §6, §7, §8): who may become a peer. Accepting writes
 * the handshake reply and attaches the peer through {@link PeerLifecycle#attach}; refusing closes
 * the socket without a byte, the only rejection every C connector understands
 * (docs/transport.md §7.1).
 *
 * <ul>
 *   <li>Every connector: the security module ({@code native}, or {@code none} where allowed; a
 *       native credential must parse), the codec ({@code v41} or {@code v4}) and the buffer type
 *       ({@link #credential}, {@link #format}; shared with {@link ToolSupport}).
 *   <li>A client (flag 0): the {@code hash} gds, or a shared-memory store this server writes
 *       ({@link ServerOptions#sharedMemoryStores}: every store holds every namespace, so clients of
 *       one namespace may announce different ones); the namespace and rank must be
 *       registered, the credential and identity block must name the registered uid/gid, and
 *       unless claimed credentials are trusted the socket's owner (the kernel's word) must be the
 *       registered uid. The host's {@code clientConnected} may still close it.
 *   <li>A singleton (flag 9; the client layout for 5.0.9 and later, the tool layout before):
 *       its own namespace, made at its connect and belonging to its uid alone; never a
 *       namespace the host knows (no rank injection into a job). uid checks against the identity
 *       block and the socket's owner.
 *   <li>Tools and launchers: {@link ToolSupport}, when tool support is on; refused otherwise.
 * </ul>
 *
 * Progress thread only.
 */
public final class Admission {
  private static final System.Logger LOG = LazyLogger.of(Admission.class);

  /** Signals a refusal; the message says why. */
  static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    Refused(String why) {
      super(why, null, false, false);
    }
  }

  private final Registry registry;
  private final PeerLifecycle lifecycle;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final boolean clientCallsHere;
  private final ServerOptions options;
  private final ToolSupport tools;
  private final BooleanSupplier stopping;
  /** The shared-memory stores' gate; null when no store is served. */
  private final @Nullable StoreWrites storeGate;

  /** The connect decisions of one server. */
  public Admission(
      Registry registry, PeerLifecycle lifecycle, HostModule host, HostCalls hostCalls,
      ServerOptions options, ToolSupport tools, BooleanSupplier stopping,
      @Nullable StoreWrites storeGate) {
    this.registry = requireNonNull(registry, "registry");
    this.lifecycle = requireNonNull(lifecycle, "lifecycle");
    this.host = requireNonNull(host, "host");
    this.hostCalls = requireNonNull(hostCalls, "hostCalls");
    this.clientCallsHere = host.clientCallsReturnAtOnce();
    this.options = requireNonNull(options, "options");
    this.tools = requireNonNull(tools, "tools");
    this.stopping = requireNonNull(stopping, "stopping");
    this.storeGate = storeGate;
  }

  /**
   * Decides a connect request. Accepts by writing the reply and handing {@code done} the new
   * peer; rejects by handing it empty, after which the caller closes the socket. Clients and
   * singletons are decided at once; a tool or launcher (with tool support on) once the host's
   * {@code toolConnected} answered, always on the progress thread.
   *
   * @param kernelUid the uid owning the connector's socket, if known
   */
  public void accept(
      ServerConnection ch, ConnectRequest req, OptionalInt kernelUid,
      Consumer<Optional<Object>> done) {
    if (!stopping.getAsBoolean() && ToolSupport.isTool(req) && options.acceptsTools()) {
      // The host decides a tool's identity: the answer may come later.
      tools.accept(ch, req, kernelUid, done);
      return;
    }
    done.accept(accept(ch, req, kernelUid));
  }

  /**
   * Decides a client's or singleton's connect request at once; tools and launchers are refused
   * here (with tool support on, the asynchronous form hands them to {@link ToolSupport}).
   *
   * @param kernelUid the uid owning the client's socket, if known
   */
  public Optional<Object> accept(ServerConnection ch, ConnectRequest req, OptionalInt kernelUid) {
    if (stopping.getAsBoolean()) {
      return reject(req, "server is stopping");
    }
    NativeCredential cred;
    WireFormat format;
    try {
      cred = credential(req, options);
      format = format(req);
    } catch (Refused e) {
      return reject(req, e.getMessage());
    }
    int[] claimed = cred == null ? null : new int[] {cred.uid(), cred.gid()};
    if (req.kind() == ConnectorKind.SIMPLE_CLIENT) {
      if (!req.gdsModule().equals("hash")
          && !options.sharedMemoryStores().contains(req.gdsModule())) {
        return reject(req, "gds module " + req.gdsModule() + " is not served");
      }
      ch.announcedGds(req.gdsModule());
      if (storeGate != null && ch.readsStore()) {
        // What this client is told after a store write waits for the write (Replies).
        ch.storeGate(storeGate);
      }
      return acceptClient(ch, req, claimed, kernelUid, format, ServerSnapshot.Role.CLIENT, true);
    }
    if (req.kind() == ConnectorKind.SINGLETON_CLIENT) {
      boolean clientLayout =
          ReplyLayout.forConnector(req.kind(), req.version()) == ReplyLayout.CLIENT;
      return acceptSingleton(ch, req, claimed, kernelUid, format, clientLayout);
    }
    // Reached only when none of the tool, system and session supports is on: a deliberate
    // difference from libpmix, which accepts a tool on its clients' URI (docs/libpmix-facts.md).
    return reject(req, "tool and launcher connections are off (no tool, system or session support)");
  }

  /**
   * The connector's credential: a parsed {@code native} one, or null for {@code none} where the
   * options allow it; any other module is refused.
   */
  static @Nullable NativeCredential credential(ConnectRequest req, ServerOptions options)
      throws Refused {
    if (req.psecModule().equals(NativeCredential.MODULE)) {
      try {
        return NativeCredential.fromBytes(req.credential());
      } catch (PmixException e) {
        throw new Refused(e.getMessage());
      }
    }
    if (req.psecModule().equals("none") && options.allowNoneSecurity()) {
      return null;
    }
    throw new Refused("security module " + req.psecModule() + " not offered");
  }

  /**
   * The codec the connector speaks: bfrops {@code v41} or {@code v4}, and its buffer type. OpenPMIx
   * 6.1.0's and master's {@code v51} and {@code v61} (what their tools announce) are the same
   * codec: each module registers the base pack and unpack functions of its library, which never
   * look at the module, for every type of v41, and only adds types that v41 lacks (devices,
   * resource units and blocks, node pids; master also allocation inheritance and REGEX2), which
   * our codec refuses as it does any unknown type (docs/codec.md).
   */
  static WireFormat format(ConnectRequest req) throws Refused {
    if (!V41_CODEC.contains(req.bfropsModule())) {
      throw new Refused("bfrops module " + req.bfropsModule() + " not supported");
    }
    try {
      return WireFormat.of(BufferType.fromCode(req.bufferType()));
    } catch (PmixException e) {
      throw new Refused("buffer type " + req.bufferType());
    }
  }

  /** The bfrops modules whose wire format is v41's. */
  private static final java.util.Set<String> V41_CODEC = java.util.Set.of("v41", "v4", "v51", "v61");

  private static Optional<Object> reject(ConnectRequest req, String why) {
    LOG.log(Level.INFO, "refusing connection {0}: {1}", req, why);
    return Optional.empty();
  }

  private Optional<Object> acceptClient(
      ServerConnection ch,
      ConnectRequest req,
      int @Nullable [] claimed,
      OptionalInt kernelUid,
      WireFormat format,
      ServerSnapshot.Role role,
      boolean clientReply) {
    String nspace = req.nspace().orElseThrow();
    int rank = req.rank().orElseThrow();
    Namespace ns = registry.namespace(nspace);
    if (ns == null) {
      return reject(req, "namespace " + nspace + " is not registered");
    }
    RankInfo info = ns.rank(rank);
    if (info == null) {
      return reject(
          req, "rank " + Integer.toUnsignedString(rank) + " of " + nspace + " is not registered");
    }
    if (claimed != null && (claimed[0] != info.uid() || claimed[1] != info.gid())) {
      return reject(
          req,
          "credential uid/gid "
              + Integer.toUnsignedString(claimed[0])
              + "/"
              + Integer.toUnsignedString(claimed[1])
              + " differ from the registration "
              + Integer.toUnsignedString(info.uid())
              + "/"
              + Integer.toUnsignedString(info.gid()));
    }
    if (req.euid().isPresent()
        && (req.euid().getAsInt() != info.uid() || req.egid().getAsInt() != info.gid())) {
      return reject(req, "identity block uid/gid differ from the registration");
    }
    if (!options.trustClaimedCredentials()) {
      if (kernelUid.isEmpty()) {
        return reject(req, "the owner of the client's socket could not be determined");
      }
      if (kernelUid.getAsInt() != info.uid()) {
        return reject(
            req,
            "the client's socket belongs to uid "
                + Integer.toUnsignedString(kernelUid.getAsInt())
                + ", registered uid is "
                + Integer.toUnsignedString(info.uid()));
      }
    }
    Peer peer = lifecycle.attach(ch, ns, info, role, format, req.version());
    if (clientReply) {
      WireBuffer reply = WireBuffer.allocate(ClientReply.LENGTH);
      ClientReply.accepted(peer.index()).encode(reply);
      ch.send(reply, reply.writerIndex());
    }
    if (role == ServerSnapshot.Role.CLIENT) {
      Object hostObject = info.hostObject();
      // Classes, not lambdas: a lambda's first call costs a fresh server 0.1-0.2 ms, here in
      // every job's first connection (docs/architecture.md, "First requests").
      hostCalls.call(
          new Supplier<CompletionStage<Void>>() {
            @Override
            public CompletionStage<Void> get() {
              return host.clientConnected(peer.proc(), hostObject);
            }
          },
          new HostCalls.Done<Void>() {
            @Override
            public void done(@Nullable Void v, @Nullable Status failure) {
              if (failure != null && !failure.equals(Status.ERR_NOT_SUPPORTED) && !peer.closed()) {
                LOG.log(Level.INFO, "host refused {0}: {1}", peer, failure);
                peer.connection().close();
              }
            }
          },
          clientCallsHere);
    }
    return Optional.of(peer);
  }

  /**
   * A singleton (flag 9): a process started without a host, which makes its own namespace. It
   * may never join a namespace it does not own, as that would change the host's accounting of
   * the job (issue #19: an injected rank made nlocalprocs drop and a fence pass without a real
   * rank). So: a namespace the server knows that a singleton did not make (registered by the
   * host, a placeholder of its clients, a tool's, remote data) is refused, and a singleton's
   * namespace admits only the uid that made it. The reply layout follows the connector's version.
   */
  private Optional<Object> acceptSingleton(
      ServerConnection ch, ConnectRequest req, int @Nullable [] claimed, OptionalInt kernelUid,
      WireFormat format, boolean clientLayout) {
    int euid;
    int egid;
    if (req.euid().isPresent()) {
      euid = req.euid().getAsInt();
      egid = req.egid().orElseThrow();
    } else if (claimed != null) {
      euid = claimed[0];
      egid = claimed[1];
    } else {
      return reject(req, "a singleton without an identity");
    }
    if (claimed != null && (claimed[0] != euid || claimed[1] != egid)) {
      // A 4.2.2 singleton ignores a bad validation status and then hangs: close instead.
      return reject(req, "credential differs from the identity block");
    }
    if (!options.trustClaimedCredentials()
        && (kernelUid.isEmpty() || kernelUid.getAsInt() != euid)) {
      return reject(req, "the singleton's socket is not owned by its claimed uid");
    }
    String nspace = req.nspace().orElseThrow();
    int rank = req.rank().orElseThrow();
    Namespace ns = registry.namespace(nspace);
    if (ns == null) {
      ns = registry.addSingletonNamespace(nspace, euid);
    } else if (!ns.madeBySingleton()) {
      return reject(req, "namespace " + nspace + " is not a singleton's");
    } else if (ns.singletonUid() != euid) {
      return reject(
          req,
          "singleton namespace "
              + nspace
              + " belongs to uid "
              + Integer.toUnsignedString(ns.singletonUid()));
    }
    RankInfo info = ns.rank(rank);
    if (info == null) {
      info = registry.addRank(ns, rank, euid, egid, null);
    } else if (info.uid() != euid) {
      return reject(req, "singleton uid differs from its registration");
    }
    Peer peer = lifecycle.attach(ch, ns, info, ServerSnapshot.Role.SINGLETON, format,
        req.version());
    WireBuffer reply;
    if (clientLayout) {
      reply = WireBuffer.allocate(ClientReply.LENGTH);
      ClientReply.accepted(peer.index()).encode(reply);
    } else {
      reply = WireBuffer.allocate(268); // the short tool reply layout
      new ToolReply.Full(
              Optional.empty(),
              new PeerId(options.serverNspace(), options.serverRank()),
              Status.SUCCESS)
          .encode(reply);
    }
    ch.send(reply, reply.writerIndex());
    return Optional.of(peer);
  }
}
