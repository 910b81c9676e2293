package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.CodecLimits;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectorKind;
import io.pmix.common.internal.wire.NativeCredential;
import io.pmix.common.internal.wire.PeerId;
import io.pmix.common.internal.wire.ReplyLayout;
import io.pmix.common.internal.wire.ToolReply;
import io.pmix.server.HostModule;
import io.pmix.server.ServerOptions;
import io.pmix.server.ServerSnapshot;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import io.pmix.server.internal.lifecycle.PeerLifecycle;
import io.pmix.server.internal.lifecycle.RankInfo;
import io.pmix.server.internal.lifecycle.Registry;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The server side of tools and launchers (connect flags 3 to 8; docs/transport.md §6 and §7.2,
 * docs/lifecycle.md §6.2.4.1): the handshake, the identity, and the namespace a
 * tool lives in. Used by {@link Admission}; progress thread only.
 *
 * <p>Handshake, in order. Everything that can refuse a tool is decided before the first reply
 * byte, and refusing means closing: a 4.2.2 tool that receives a non-zero status (or validation
 * status) hangs in {@code PMIx_tool_init}, while a close makes it return {@code
 * PMIX_ERR_UNREACH}.
 *
 * <ol>
 *   <li>Security module, codec and buffer type as for clients ({@link Admission#credential},
 *       {@link Admission#format}); the legacy flags 1 and 2, which no
 *       OpenPMIx 4.x tool sends, are refused.
 *   <li>Credentials: a {@code native} credential must claim the uid/gid of the identity block
 *       (4.2.2 would answer validation status -12 and hang the tool); unless claimed credentials
 *       are trusted, the kernel's owner of the socket must be that uid.
 *   <li>The host's {@link HostModule#toolConnected} gets the connector's info blob (decoded when
 *       it can be: 4.2.2 servers never decode it, 4.2.3 and later do) followed by {@code
 *       pmix.version}, {@code pmix.euid}, {@code pmix.egid} and, for a connector with an identity,
 *       {@code pmix.nspace} and {@code pmix.rank}, the order 4.2.2 uses. Its answer is the tool's
 *       identity; a failure refuses the tool. A host that does not implement it ({@code
 *       NOT_SUPPORTED}) leaves the decision to the server, which accepts tools of its own user (or
 *       root) only, except a tool claiming a rank the host registered, which that rank's
 *       registration decides (next item); it keeps a given identity and assigns {@code <server
 *       nspace>-tool-<n>}, rank 0, to a tool that needs one.
 *   <li>A tool whose identity is a rank the host registered with register-client (a launcher's
 *       child started with {@code PMIX_NAMESPACE}/{@code PMIX_RANK}, flags 5 and 8) is attached
 *       to that rank like a client, reclaiming its tombstone, and must present the registered
 *       uid/gid. Any other tool gets a namespace and rank record of its own, made here and shared
 *       only with other live tools of the same identity; a rank of a host namespace that the host
 *       did not register is refused.
 *   <li>The reply (status 0, the assigned identity for flags 3 and 6, the server's identity,
 *       validation status 0): 528 or 268 bytes.
 * </ol>
 *
 * <p>Lifetime: a tool's peer is freed when its socket closes; the namespace and rank record made
 * for it here are dropped with its last live peer, so tools cycling init/finalize leave nothing
 * behind ({@link PeerLifecycle}).
 */
final class ToolSupport {
  private static final System.Logger LOG = LazyLogger.of(ToolSupport.class);

  private final Registry registry;
  private final PeerLifecycle lifecycle;
  private final HostModule host;
  private final HostCalls hostCalls;
  private final ServerOptions options;
  private final CodecLimits limits;
  private final BooleanSupplier stopping;
  private final int serverUid;
  private int counter;

  ToolSupport(
      Registry registry, PeerLifecycle lifecycle, HostModule host, HostCalls hostCalls,
      ServerOptions options, CodecLimits limits, BooleanSupplier stopping) {
    this.registry = requireNonNull(registry, "registry");
    this.lifecycle = requireNonNull(lifecycle, "lifecycle");
    this.host = requireNonNull(host, "host");
    this.hostCalls = requireNonNull(hostCalls, "hostCalls");
    this.options = requireNonNull(options, "options");
    this.limits = requireNonNull(limits, "limits");
    this.stopping = requireNonNull(stopping, "stopping");
    this.serverUid = Rendezvous.effectiveIds()[0];
  }

  /** Whether {@code req} is a tool or launcher connection (flags 1 to 8). */
  static boolean isTool(ConnectRequest req) {
    ConnectorKind k = req.kind();
    return k != ConnectorKind.SIMPLE_CLIENT && k != ConnectorKind.SINGLETON_CLIENT;
  }

  /** The checked facts of a tool's request, before the host is asked. */
  private record Request(
      ServerConnection ch,
      ConnectRequest req,
      WireFormat format,
      int euid,
      int egid,
      OptionalInt kernelUid,
      @Nullable Proc given) {}

  /**
   * Decides a tool's connect request; {@code done} gets the new peer once the reply is written,
   * or empty when the connection is to be closed without a byte. Asks the host, so {@code done}
   * may run later (always on the progress thread).
   */
  void accept(
      ServerConnection ch, ConnectRequest req, OptionalInt kernelUid,
      Consumer<Optional<Object>> done) {
    Request r;
    try {
      r = check(ch, req, kernelUid);
    } catch (Admission.Refused e) {
      done.accept(refuse(req, e.getMessage()));
      return;
    }
    List<Info> info = hostInfo(r);
    List<Info> hostCopy = List.copyOf(info);
    hostCalls.call(
        () -> host.toolConnected(hostCopy),
        (proc, failure) -> done.accept(decided(r, proc, failure)));
  }

  private Request check(ServerConnection ch, ConnectRequest req, OptionalInt kernelUid)
      throws Admission.Refused {
    ConnectorKind kind = req.kind();
    if (!options.acceptsTools()) {
      throw new Admission.Refused("tool support is off (ServerOptions.toolSupport)");
    }
    if (kind == ConnectorKind.LEGACY_TOOL || kind == ConnectorKind.LEGACY_LAUNCHER) {
      throw new Admission.Refused(
          "legacy connector flag " + kind.flag() + " (pre-4.0 tools) not served");
    }
    int euid = req.euid().orElseThrow();
    int egid = req.egid().orElseThrow();
    NativeCredential cred = Admission.credential(req, options);
    if (cred != null && (cred.uid() != euid || cred.gid() != egid)) {
      throw new Admission.Refused(
          "credential "
              + cred
              + " differs from the identity block "
              + Integer.toUnsignedString(euid)
              + "/"
              + Integer.toUnsignedString(egid));
    }
    WireFormat format = Admission.format(req);
    if (!options.trustClaimedCredentials()) {
      if (kernelUid.isEmpty()) {
        throw new Admission.Refused("the owner of the tool's socket could not be determined");
      }
      if (kernelUid.getAsInt() != euid) {
        throw new Admission.Refused(
            "the tool's socket belongs to uid "
                + Integer.toUnsignedString(kernelUid.getAsInt())
                + ", it claims uid "
                + Integer.toUnsignedString(euid));
      }
    }
    Proc given = null;
    if (kind.carriesProcId()) {
      try {
        given = Proc.of(req.nspace().orElseThrow(), req.rank().orElseThrow());
      } catch (IllegalArgumentException e) {
        throw new Admission.Refused("unusable identity: " + e.getMessage());
      }
    }
    return new Request(ch, req, format, euid, egid, kernelUid, given);
  }

  /** What {@code tool_connected} is told: the decoded blob, then what 4.2.2 adds. */
  private List<Info> hostInfo(Request r) {
    List<Info> info = new ArrayList<>(decodeBlob(r.req(), r.format()));
    info.add(Info.of(Keys.VERSION_INFO, Value.of(r.req().version())));
    info.add(Info.of(Keys.USERID, Value.uint32(Integer.toUnsignedLong(r.euid()))));
    info.add(Info.of(Keys.GRPID, Value.uint32(Integer.toUnsignedLong(r.egid()))));
    if (r.given() != null) {
      info.add(Info.of(Keys.NSPACE, Value.of(r.given().nspace())));
      info.add(Info.of(Keys.RANK, Value.rank(r.given().rank())));
    }
    return info;
  }

  /**
   * The connector's info blob ({@code size_t} count, then the infos, in its own codec), or empty
   * when there is none or it cannot be decoded. A 4.2.2 connector's pad byte follows it.
   */
  List<Info> decodeBlob(ConnectRequest req, WireFormat format) {
    if (req.infoBlobLength() == 0) {
      return List.of();
    }
    try {
      PmixReader rd = new PmixReader(WireBuffer.wrap(req.infoBlob()), format, limits);
      long n = rd.unpackSize();
      if (n <= 0 || n > limits.maxItems()) {
        return List.of();
      }
      return List.copyOf(rd.unpackInfos((int) n));
    } catch (RuntimeException e) {
      LOG.log(Level.DEBUG, "undecodable info blob from {0}: {1}", req, e.getMessage());
      return List.of();
    }
  }

  /** The host answered (or did not implement the upcall): attach the tool or refuse it. */
  private Optional<Object> decided(Request r, @Nullable Proc answer, @Nullable Status failure) {
    ConnectRequest req = r.req();
    if (!r.ch().isOpen()) {
      return Optional.empty(); // the tool gave up meanwhile: nothing to attach
    }
    if (stopping.getAsBoolean()) {
      return refuse(req, "server is stopping");
    }
    Proc proc;
    if (failure == null) {
      if (answer == null || answer.isSpecialRank()) {
        return refuse(req, "the host's tool_connected gave no usable identity: " + answer);
      }
      proc = answer;
    } else if (failure.equals(Status.ERR_NOT_SUPPORTED)) {
      // No host decision (4.2.2: no tool_connected): the server's own policy. A tool claiming
      // a rank the host registered is decided by that registration below (the host already
      // said whose rank it is); any other tool must be the server's user or root.
      if (!hostRegistered(r.given()) && r.euid() != serverUid && r.euid() != 0) {
        return refuse(
            req,
            "uid "
                + Integer.toUnsignedString(r.euid())
                + " is not the server's user, and the host does not decide (toolConnected)");
      }
      proc = r.given() != null ? r.given() : Proc.of(freshNamespace(), 0);
    } else {
      return refuse(req, "the host refused the tool: " + failure);
    }
    Namespace ns = registry.namespace(proc.nspace());
    RankInfo info;
    if (ns == null) {
      ns = registry.addToolNamespace(proc.nspace());
      info = registry.addRank(ns, proc.rank(), r.euid(), r.egid(), null);
    } else {
      info = ns.rank(proc.rank());
      if (info == null) {
        if (!ns.isToolNamespace()) {
          return refuse(
              req, proc + " names a rank the host did not register in its namespace " + ns.name());
        }
        info = registry.addRank(ns, proc.rank(), r.euid(), r.egid(), null);
      } else if (info.uid() != r.euid() || (info.hostRegistered() && info.gid() != r.egid())) {
        return refuse(
            req,
            "uid/gid "
                + Integer.toUnsignedString(r.euid())
                + "/"
                + Integer.toUnsignedString(r.egid())
                + " differ from those of "
                + proc
                + " ("
                + Integer.toUnsignedString(info.uid())
                + "/"
                + Integer.toUnsignedString(info.gid())
                + ")");
      }
    }
    ServerSnapshot.Role role =
        req.kind().isLauncher() ? ServerSnapshot.Role.LAUNCHER : ServerSnapshot.Role.TOOL;
    Peer peer = lifecycle.attach(r.ch(), ns, info, role, r.format(), req.version());
    boolean needsId = ReplyLayout.forConnector(req.kind(), req.version())
        == ReplyLayout.TOOL_WITH_ASSIGNED_ID;
    WireBuffer reply = WireBuffer.allocate(needsId ? 528 : 268);
    new ToolReply.Full(
            needsId ? Optional.of(new PeerId(proc.nspace(), proc.rank())) : Optional.empty(),
            new PeerId(options.serverNspace(), options.serverRank()),
            Status.SUCCESS)
        .encode(reply);
    r.ch().send(reply, reply.writerIndex());
    LOG.log(Level.DEBUG, "tool {0} connected as {1}", req, peer);
    return Optional.of(peer);
  }

  private String freshNamespace() {
    String name;
    do {
      counter++;
      name = options.serverNspace() + "-tool-" + counter;
    } while (registry.hasNamespace(name));
    return name;
  }

  /** Whether {@code p} names a rank the host registered with register-client. */
  private boolean hostRegistered(@Nullable Proc p) {
    if (p == null) {
      return false;
    }
    Namespace ns = registry.namespace(p.nspace());
    RankInfo info = ns == null ? null : ns.rank(p.rank());
    return info != null && info.hostRegistered();
  }

  private static Optional<Object> refuse(ConnectRequest req, String why) {
    LOG.log(Level.INFO, "refusing tool connection {0}: {1}", req, why);
    return Optional.empty();
  }
}
