package io.pmix.server;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.codec.BufferType;
import io.pmix.common.internal.connector.LocalProcess;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Settings of a {@link PMIxServer}. Immutable; build one with {@link #builder()}.
 *
 * <p>Ownership: a {@link Builder#hostExecutor host executor} handed in is borrowed, never shut
 * down by the server; when none is given the server creates a single host thread and owns it.
 */
public final class ServerOptions {
  /** The system property that sets {@link #nettyTransport}'s default ("true" or "false"). */
  public static final String NETTY_TRANSPORT_PROPERTY = "io.pmix.server.nettyTransport";

  private final String serverNspace;
  private final int serverRank;
  private final Duration handshakeTimeout;
  private final Duration storeLockTimeout;
  private final int maxMessageSize;
  private final long frameBudget;
  private final int maxPendingHandshakes;
  private final boolean trustClaimedCredentials;
  private final boolean allowNoneSecurity;
  private final @Nullable Executor hostExecutor;
  private final String hostname;
  private final Path tmpdir;
  private final Path systemTmpdir;
  private final BufferType childBufferType;
  private final boolean preferEpoll;
  private final boolean nettyTransport;
  private final boolean toolSupport;
  private final boolean systemSupport;
  private final boolean sessionSupport;
  private final List<String> sharedMemoryStores;
  private final OptionalInt jobUser;

  private ServerOptions(Builder b) {
    this.serverNspace = b.serverNspace;
    this.serverRank = b.serverRank;
    this.handshakeTimeout = b.handshakeTimeout;
    this.storeLockTimeout = b.storeLockTimeout;
    this.maxMessageSize = b.maxMessageSize;
    this.frameBudget = b.frameBudget;
    this.maxPendingHandshakes = b.maxPendingHandshakes;
    this.trustClaimedCredentials = b.trustClaimedCredentials;
    this.allowNoneSecurity = b.allowNoneSecurity;
    this.hostExecutor = b.hostExecutor;
    this.hostname = b.hostname != null ? b.hostname : defaultHostname();
    this.tmpdir = b.tmpdir != null ? b.tmpdir : defaultTmpdir("PMIX_SERVER_TMPDIR");
    this.systemTmpdir =
        b.systemTmpdir != null ? b.systemTmpdir : defaultTmpdir("PMIX_SYSTEM_TMPDIR");
    this.childBufferType = b.childBufferType;
    this.preferEpoll = b.preferEpoll;
    this.nettyTransport = b.nettyTransport;
    this.toolSupport = b.toolSupport;
    this.systemSupport = b.systemSupport;
    this.sessionSupport = b.sessionSupport;
    String gds = b.gds != null ? b.gds : System.getenv("PMIX_MCA_gds");
    this.sharedMemoryStores = dstoresOf(gds);
    this.jobUser = b.jobUser;
  }

  /**
   * The shared-memory stores a libpmix-style component list leaves (the MCA parameter {@code gds}:
   * {@code ds12,hash} keeps those, {@code ^ds21} all but ds21, absent or empty all), best first.
   */
  static List<String> dstoresOf(@Nullable String spec) {
    List<String> all = List.of("ds21", "ds12");
    if (spec == null || spec.isBlank()) {
      return all;
    }
    String t = spec.trim();
    boolean exclude = t.startsWith("^");
    java.util.Set<String> named = new java.util.HashSet<>();
    for (String n : (exclude ? t.substring(1) : t).split(",", -1)) {
      named.add(n.trim());
    }
    List<String> out = new java.util.ArrayList<>();
    for (String m : all) {
      if (named.contains(m) != exclude) {
        out.add(m);
      }
    }
    return List.copyOf(out);
  }

  /**
   * The libpmix 4.2.2 shared-memory stores this server writes and offers its clients ({@code
   * ds21}, {@code ds12}), best first; empty when only hash is served.
   */
  public List<String> sharedMemoryStores() {
    return sharedMemoryStores;
  }

  /**
   * The user whose processes read the shared-memory stores ({@link Builder#jobUser}); empty: this
   * process's user.
   */
  public OptionalInt jobUser() {
    return jobUser;
  }

  /** A builder with the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** The defaults: see {@link Builder}. */
  public static ServerOptions defaults() {
    return builder().build();
  }

  /** The server's own namespace, published in its URI. */
  public String serverNspace() {
    return serverNspace;
  }

  /** The server's own rank (by default this process's pid, as OpenPMIx does). */
  public int serverRank() {
    return serverRank;
  }

  /** How long a new connection may take to send its connect request before it is closed. */
  public Duration handshakeTimeout() {
    return handshakeTimeout;
  }

  /**
   * How long one shared-memory store write waits for the readers' locks before it is given up:
   * the store is then retired (docs/gds.md §10, "A lost lock"): the ranks written from then on
   * are hidden from its readers, who ask the server, and it is offered to no new process; a fresh
   * store of its module takes its place for the namespaces registered after.
   */
  public Duration storeLockTimeout() {
    return storeLockTimeout;
  }

  /** The largest message payload accepted from a peer; a larger one drops the connection. */
  public int maxMessageSize() {
    return maxMessageSize;
  }

  /**
   * The bytes that all connections together may hold in messages still being received: a message
   * whose announced payload does not fit in what is left drops its connection (before its payload
   * is buffered), as an oversized one does.
   */
  public long frameBudget() {
    return frameBudget;
  }

  /**
   * How many connections may be open without having completed the handshake (from the accept
   * until the connect request is decided); one more replaces the oldest that has not sent its
   * request, or is closed at once if there is none.
   */
  public int maxPendingHandshakes() {
    return maxPendingHandshakes;
  }

  /**
   * Whether a client's claimed uid/gid are believed without asking the kernel who owns its socket
   * (OpenPMIx's behaviour over TCP).
   */
  public boolean trustClaimedCredentials() {
    return trustClaimedCredentials;
  }

  /** Whether clients may connect with the {@code none} security module. */
  public boolean allowNoneSecurity() {
    return allowNoneSecurity;
  }

  /** The executor host upcalls run on, if the host provided one. */
  public Optional<Executor> hostExecutor() {
    return Optional.ofNullable(hostExecutor);
  }

  /** The name of this node, as children see it ({@code PMIX_HOSTNAME}) and job data names it. */
  public String hostname() {
    return hostname;
  }

  /** The session temporary directory given to children ({@code PMIX_SERVER_TMPDIR}). */
  public Path tmpdir() {
    return tmpdir;
  }

  /** The system temporary directory given to children ({@code PMIX_SYSTEM_TMPDIR}). */
  public Path systemTmpdir() {
    return systemTmpdir;
  }

  /** The buffer type children are told to use ({@code PMIX_BFROP_BUFFER_TYPE}). */
  public BufferType childBufferType() {
    return childBufferType;
  }

  /**
   * Whether an epoll transport is used when available: the server's own (pmix-java's native
   * library), else Netty's; NIO's otherwise.
   */
  public boolean preferEpoll() {
    return preferEpoll;
  }

  /**
   * Whether the server runs on Netty's transport even where its own can run (pmix-java's native
   * library loads): false by default, or as the system property {@value #NETTY_TRANSPORT_PROPERTY}
   * says (so that a launcher's JVM can be switched without code, {@code PMIXRUN_JAVA_OPTS}). The
   * two speak the same bytes; the server's own starts faster and costs less per message
   * (docs/architecture.md, "A server transport without Netty").
   */
  public boolean nettyTransport() {
    return nettyTransport;
  }

  /**
   * Whether tools and launchers may connect ({@code PMIX_SERVER_TOOL_SUPPORT}): the server then
   * answers their handshakes and publishes itself in rendezvous files found by pid and by
   * namespace.
   */
  public boolean toolSupport() {
    return toolSupport;
  }

  /**
   * Whether the server is this host's system server ({@code PMIX_SERVER_SYSTEM_SUPPORT}): it then
   * writes {@code pmix.sys.<host>} in the {@linkplain #systemTmpdir system temporary directory}.
   */
  public boolean systemSupport() {
    return systemSupport;
  }

  /**
   * Whether the server is its session's server ({@code PMIX_SERVER_SESSION_SUPPORT}): it then also
   * writes the session-level {@code pmix.<host>.tool} file.
   */
  public boolean sessionSupport() {
    return sessionSupport;
  }

  /** Whether tool and launcher connections are accepted: any of the three supports is on. */
  public boolean acceptsTools() {
    return toolSupport || systemSupport || sessionSupport;
  }

  private static String defaultHostname() {
    String env = System.getenv("PMIX_HOSTNAME");
    if (env != null && !env.isEmpty()) {
      return env;
    }
    // gethostname(2) without the domain, as OpenPMIx (unless told to keep the FQDN) and our
    // client name the node; no name-service lookup of it (InetAddress.getLocalHost's).
    return LocalProcess.localHostname();
  }


  /** The variable {@code pmixVariable}, else TMPDIR, TEMP, TMP, else /tmp (as OpenPMIx). */
  private static Path defaultTmpdir(String pmixVariable) {
    for (String v : new String[] {pmixVariable, "TMPDIR", "TEMP", "TMP"}) {
      String s = System.getenv(v);
      if (s != null && !s.isEmpty()) {
        return Paths.get(s);
      }
    }
    return Paths.get("/tmp");
  }

  /**
   * Builds {@link ServerOptions}. Defaults: nspace {@code pmix-server}, rank = this pid, handshake
   * timeout 10 s, max message 64 MiB, a frame budget of 256 MiB for all connections, at most 4,096
   * connections awaiting their handshake, claimed credentials checked against the kernel, security
   * {@code native} only, a server-owned host thread, hostname from {@code PMIX_HOSTNAME} or the
   * system (domain stripped), session tmpdir from {@code $PMIX_SERVER_TMPDIR}, system tmpdir from
   * {@code $PMIX_SYSTEM_TMPDIR}, each else {@code $TMPDIR}, {@code $TEMP}, {@code $TMP}, else
   * {@code /tmp}; NON_DESC buffers, epoll when available; no tool, system or session support.
   * Not thread-safe.
   */
  public static final class Builder {
    private String serverNspace = "pmix-server";
    private int serverRank = (int) ProcessHandle.current().pid();
    private Duration handshakeTimeout = Duration.ofSeconds(10);
    private Duration storeLockTimeout = Duration.ofSeconds(5);
    private int maxMessageSize = 64 << 20;
    private long frameBudget = 256L << 20;
    private int maxPendingHandshakes = 4096;
    private boolean trustClaimedCredentials;
    private boolean allowNoneSecurity;
    private @Nullable Executor hostExecutor;
    private @Nullable String hostname;
    private @Nullable Path tmpdir;
    private @Nullable Path systemTmpdir;
    private BufferType childBufferType = BufferType.NON_DESC;
    private boolean preferEpoll = true;
    private boolean nettyTransport = Boolean.getBoolean(NETTY_TRANSPORT_PROPERTY);
    private boolean toolSupport;
    private boolean systemSupport;
    private boolean sessionSupport;
    private @Nullable String gds;
    private OptionalInt jobUser = OptionalInt.empty();

    private Builder() {}

    /**
     * The server's namespace. It must not contain a dot: a C tool handed the URI splits the
     * namespace from the rank at the first dot (docs/transport.md §3.2).
     */
    @CanIgnoreReturnValue
    public Builder serverNspace(String nspace) {
      requireNonNull(nspace, "nspace");
      checkArgument(!nspace.isEmpty() && nspace.indexOf('.') < 0 && nspace.indexOf(';') < 0,
          "server nspace must be non-empty and contain no '.' or ';': %s", nspace);
      this.serverNspace = nspace;
      return this;
    }

    /** The server's rank. */
    @CanIgnoreReturnValue
    public Builder serverRank(int rank) {
      this.serverRank = rank;
      return this;
    }

    /** How long a connection may take to send its connect request (positive). */
    @CanIgnoreReturnValue
    public Builder handshakeTimeout(Duration timeout) {
      checkArgument(!timeout.isNegative() && !timeout.isZero(), "timeout must be positive");
      this.handshakeTimeout = timeout;
      return this;
    }

    /**
     * How long one shared-memory store write waits for the readers' locks (positive; default 5
     * s). A reader holds its lock only while it copies bytes; one that stops holding it (stopped,
     * traced) delays the store writes, which run on their own thread, so the server serves
     * everything else meanwhile, but what its store readers are told after the write waits too.
     * One that dies holding ds12's rwlock holds it for good: the write times out and the store
     * is retired, its readers asking the server from then on (never reading what a failed write
     * was to replace).
     */
    @CanIgnoreReturnValue
    public Builder storeLockTimeout(Duration timeout) {
      checkArgument(!timeout.isNegative() && !timeout.isZero(), "timeout must be positive");
      this.storeLockTimeout = timeout;
      return this;
    }

    /** The largest payload accepted from a peer, in bytes (positive). */
    @CanIgnoreReturnValue
    public Builder maxMessageSize(int bytes) {
      checkArgument(bytes > 0, "maxMessageSize must be positive");
      this.maxMessageSize = bytes;
      return this;
    }

    /**
     * The bytes all connections together may hold in messages still being received (positive).
     * A message reserves its announced payload from its header until it is complete; one that
     * does not fit drops its connection, so that a few peers announcing large messages and
     * sending them slowly cannot take the heap (a C peer drops a connection whose message it
     * cannot take, too). Dropping rather than pausing the read: a paused connection still holds
     * what it buffered, and the peers holding the budget need not ever finish. The default, 256
     * MiB, is four messages of the largest size at once, far beyond what a job's commits and
     * requests have in flight (a job's large data flows from the server to its clients).
     */
    @CanIgnoreReturnValue
    public Builder frameBudget(long bytes) {
      checkArgument(bytes > 0, "frameBudget must be positive");
      this.frameBudget = bytes;
      return this;
    }

    /**
     * How many connections may await their handshake at once (positive): counted from the accept
     * until the connect request is decided, each closed at the latest after the {@linkplain
     * #handshakeTimeout handshake timeout}, so idle sockets cannot exhaust the server's
     * descriptors. One more closes the oldest counted connection that has not sent its whole
     * connect request and takes its place (so a full cap of idle sockets does not lock real
     * connectors out); when every counted one has sent its request, the newcomer is closed at
     * once. The default, 4,096 (the listen backlog), is more than a node's ranks starting
     * together.
     */
    @CanIgnoreReturnValue
    public Builder maxPendingHandshakes(int connections) {
      checkArgument(connections > 0, "maxPendingHandshakes must be positive");
      this.maxPendingHandshakes = connections;
      return this;
    }

    /**
     * Believe a client's claimed uid/gid without checking the kernel's owner of its socket, as
     * OpenPMIx does over TCP. Off by default.
     */
    @CanIgnoreReturnValue
    public Builder trustClaimedCredentials(boolean trust) {
      this.trustClaimedCredentials = trust;
      return this;
    }

    /** Accept the {@code none} security module and advertise it to children. Off by default. */
    @CanIgnoreReturnValue
    public Builder allowNoneSecurity(boolean allow) {
      this.allowNoneSecurity = allow;
      return this;
    }

    /** Run host upcalls on this executor; borrowed, never shut down by the server. */
    @CanIgnoreReturnValue
    public Builder hostExecutor(Executor executor) {
      this.hostExecutor = requireNonNull(executor, "executor");
      return this;
    }

    /** This node's name. */
    @CanIgnoreReturnValue
    public Builder hostname(String name) {
      requireNonNull(name, "name");
      checkArgument(!name.isEmpty(), "empty hostname");
      this.hostname = name;
      return this;
    }

    /**
     * The session temporary directory children are told about, below which the tool rendezvous
     * files go. Created (and removed again at shutdown) only when tool support needs it and it is
     * missing; never removed otherwise.
     */
    @CanIgnoreReturnValue
    public Builder tmpdir(Path dir) {
      this.tmpdir = requireNonNull(dir, "dir");
      return this;
    }

    /**
     * The system temporary directory children are told about, where a system server writes
     * {@code pmix.sys.<host>}; created and removed like {@link #tmpdir}.
     */
    @CanIgnoreReturnValue
    public Builder systemTmpdir(Path dir) {
      this.systemTmpdir = requireNonNull(dir, "dir");
      return this;
    }

    /** The buffer type children are told to use. */
    @CanIgnoreReturnValue
    public Builder childBufferType(BufferType type) {
      this.childBufferType = requireNonNull(type, "type");
      return this;
    }

    /** Use the native epoll transport when available (default true). */
    @CanIgnoreReturnValue
    public Builder preferEpoll(boolean prefer) {
      this.preferEpoll = prefer;
      return this;
    }

    /**
     * Run on Netty's transport even where the server's own can run (default false; {@link
     * ServerOptions#nettyTransport}).
     */
    @CanIgnoreReturnValue
    public Builder nettyTransport(boolean netty) {
      this.nettyTransport = netty;
      return this;
    }

    /**
     * Accept tools and launchers, and publish the server for them in rendezvous files under the
     * session tmpdir ({@code pmix.<host>.tool.<pid>} and {@code pmix.<host>.tool.<nspace>}, in a
     * directory of this server's own, removed at shutdown). Off by default: tool connections are
     * then closed.
     */
    @CanIgnoreReturnValue
    public Builder toolSupport(boolean support) {
      this.toolSupport = support;
      return this;
    }

    /**
     * Also act as this host's system server: write {@code pmix.sys.<host>} in the system tmpdir,
     * where tools asking for the system server and singleton clients look. Only one live server
     * per host and system tmpdir can hold it: starting fails if a live server already does.
     * Tools are then accepted even without {@link #toolSupport}. Off by default.
     */
    @CanIgnoreReturnValue
    public Builder systemSupport(boolean support) {
      this.systemSupport = support;
      return this;
    }

    /**
     * Also write the session-level {@code pmix.<host>.tool} file, which tools given no target
     * find. Tools are then accepted even without {@link #toolSupport}. Off by default.
     */
    @CanIgnoreReturnValue
    public Builder sessionSupport(boolean support) {
      this.sessionSupport = support;
      return this;
    }

    /**
     * Which gds modules to serve, in libpmix's MCA syntax ({@code PMIX_MCA_gds}): {@code hash}
     * serves only the socket store, {@code ds12,hash} or {@code ^ds21} leave ds21 out. Hash is
     * always served. Default: {@code $PMIX_MCA_gds}, else ds21, ds12 and hash.
     */
    @CanIgnoreReturnValue
    public Builder gds(String components) {
      this.gds = requireNonNull(components, "components");
      return this;
    }

    /**
     * The user whose jobs this server serves, as libpmix's {@code PMIX_USERID} given to {@code
     * PMIx_server_init} (what a resource manager running as root for a user's job passes): the
     * shared-memory stores (their directories and every file, modes 0700/0600) are made that
     * user's, so its clients read them and no other user can. Changing the owner needs root; when
     * it cannot be done the stores are not offered (hash only). Whatever the stores' user, a client
     * the host registered under another uid is told to use hash ({@code setupFork}), since it
     * could not read them. Default: this process's user.
     */
    @CanIgnoreReturnValue
    public Builder jobUser(int uid) {
      this.jobUser = OptionalInt.of(uid);
      return this;
    }

    /** The options. */
    public ServerOptions build() {
      return new ServerOptions(this);
    }
  }
}
