package io.pmix.tool.internal;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.BufferType;
import io.pmix.common.internal.connector.LocalProcess;
import io.pmix.common.internal.connector.ServerAddress;
import io.pmix.common.internal.wire.ConnectorKind;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What one {@code PMIxTool.init} was asked for, read once from its directives and a snapshot of
 * the environment (so tests can hand in any map, and a changed environment is honoured by the
 * next init): who the tool is, which kind of connector it announces (flags 3 to 8 of
 * docs/transport.md §6.3), where its server is to be found (§4.2), and the temporary
 * directories it searches. Immutable; part of one cycle's state and forgotten with it.
 *
 * @param identity the name the tool gives itself, if any (attributes or environment)
 * @param kind the connector kind to announce
 * @param targets where to look for the server, in order; the first that yields a connection wins
 *     (more than one only with {@code pmix.cnct.sys.first})
 * @param doNotConnect {@code pmix.tool.nocon}: never connect
 * @param connectOptional {@code pmix.tool.conopt}: run unconnected if no server can be reached
 * @param hostname this node's name ({@code PMIX_HOSTNAME}, else the local host name)
 * @param systemTmpdir the root of the rendezvous search ({@code pmix.sys.tmpdir} attribute, else
 *     {@code PMIX_SYSTEM_TMPDIR}, {@code TMPDIR}, {@code TEMP}, {@code TMP}, else {@code /tmp})
 * @param sessionTmpdir a second search root, when given ({@code pmix.srvr.tmpdir} attribute or
 *     {@code PMIX_SERVER_TMPDIR})
 * @param psecModule the security module to offer ({@code PMIX_SECURITY_MODE})
 * @param bufferType the buffer kind to speak ({@code PMIX_BFROP_BUFFER_TYPE})
 * @param attempts connect attempts per server ({@code pmix.tool.mretries} + 1; default 10)
 * @param retryDelay pause between attempts ({@code pmix.tool.retry} seconds; default 100 ms)
 * @param retriesGiven whether the caller set the retries (a search then uses them per candidate)
 * @param connectInfo the directives passed on to the server in the connect request's info blob
 */
public record ToolSettings(
    Optional<Proc> identity,
    ConnectorKind kind,
    List<Target> targets,
    boolean doNotConnect,
    boolean connectOptional,
    String hostname,
    Path systemTmpdir,
    Optional<Path> sessionTmpdir,
    String psecModule,
    BufferType bufferType,
    int attempts,
    Duration retryDelay,
    boolean retriesGiven,
    List<Info> connectInfo) {

  /** Where a tool looks for its server (docs/transport.md §4.2, in its order). */
  public sealed interface Target {
    /** Route 1: a URI given as {@code pmix.srvr.uri} or {@code pmix.tcp.uri}. */
    record ByUri(String uri) implements Target {}

    /**
     * Route 1 with a {@code file:} URI, or route 2: {@code pmix.tool.attach}, a rendezvous file.
     */
    record ByFile(Path file) implements Target {}

    /** Route 3: the system server's {@code pmix.sys.<host>} in the system tmpdir. */
    record SystemServer() implements Target {}

    /** Route 4: the server with this pid ({@code pmix.srvr.pidinfo}). */
    record ByPid(long pid) implements Target {}

    /** Route 5: the server with this namespace ({@code pmix.srv.nspace}). */
    record ByNspace(String nspace) implements Target {}

    /** Route 6: the server that launched this tool, from {@code PMIX_SERVER_URIxx}. */
    record LaunchingServer(ServerAddress address) implements Target {}

    /** Route 7: the first server whose rendezvous file is found below the tmpdirs. */
    record FirstFound() implements Target {}
  }

  /** Attributes {@code PMIx_tool_init} reads itself; they are not forwarded in the info blob. */
  static final Set<String> CONSUMED =
      Set.of(
          Keys.SERVER_URI.name(),
          Keys.TCP_URI.name(),
          Keys.TOOL_ATTACHMENT_FILE.name(),
          Keys.CONNECT_TO_SYSTEM.name(),
          Keys.CONNECT_SYSTEM_FIRST.name(),
          Keys.SERVER_PIDINFO.name(),
          Keys.SERVER_NSPACE.name(),
          Keys.TOOL_DO_NOT_CONNECT.name(),
          Keys.TOOL_CONNECT_OPTIONAL.name(),
          Keys.CONNECT_MAX_RETRIES.name(),
          Keys.CONNECT_RETRY_DELAY.name(),
          Keys.SYSTEM_TMPDIR.name(),
          Keys.SERVER_TMPDIR.name());

  private static final int DEFAULT_ATTEMPTS = 10;
  private static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(100);

  /** Checks for nulls and sane numbers. */
  public ToolSettings {
    requireNonNull(identity, "identity");
    requireNonNull(kind, "kind");
    requireNonNull(targets, "targets");
    requireNonNull(hostname, "hostname");
    requireNonNull(systemTmpdir, "systemTmpdir");
    requireNonNull(sessionTmpdir, "sessionTmpdir");
    requireNonNull(psecModule, "psecModule");
    requireNonNull(bufferType, "bufferType");
    requireNonNull(retryDelay, "retryDelay");
    requireNonNull(connectInfo, "connectInfo");
    if (attempts < 1) {
      throw new IllegalArgumentException("attempts must be at least 1");
    }
  }

  /**
   * Reads the directives of one init and the environment.
   *
   * @throws PmixException with {@code ERR_BAD_PARAM} for a malformed attribute or variable, {@code
   *     ERR_NOT_SUPPORTED} for a security mode or codec this library lacks
   * @throws IllegalArgumentException for contradictory directives (a rank without a namespace)
   */
  public static ToolSettings parse(Map<String, String> env, List<Info> directives) {
    requireNonNull(env, "env");
    requireNonNull(directives, "directives");
    Map<String, Value> attrs = new java.util.LinkedHashMap<>();
    for (Info i : directives) {
      attrs.putIfAbsent(i.key(), i.value());
    }

    String hostname = nonEmpty(env.get("PMIX_HOSTNAME"));
    if (hostname == null) {
      hostname = LocalProcess.localHostname();
    }
    String sys = string(attrs, Keys.SYSTEM_TMPDIR.name());
    if (sys == null) {
      sys = firstEnv(env, "PMIX_SYSTEM_TMPDIR", "TMPDIR", "TEMP", "TMP");
    }
    Path systemTmpdir = Path.of(sys != null ? sys : "/tmp");
    String session = string(attrs, Keys.SERVER_TMPDIR.name());
    if (session == null) {
      session = nonEmpty(env.get("PMIX_SERVER_TMPDIR"));
    }
    // Not Optional.map with a method reference: a first init runs this (docs/architecture.md,
    // "First requests").
    Optional<Path> sessionTmpdir =
        session == null ? Optional.empty() : Optional.of(Path.of(session));

    boolean launcher = flag(attrs, Keys.LAUNCHER.name());
    // Identity: attributes first (flags 4/7), then the environment a server gives its children
    // (flags 5/8), else the server assigns one (flags 3/6).
    Optional<Proc> identity = Optional.empty();
    ConnectorKind kind = launcher ? ConnectorKind.LAUNCHER_NEEDS_ID : ConnectorKind.TOOL_NEEDS_ID;
    String toolNs = string(attrs, Keys.TOOL_NSPACE.name());
    Value toolRank = attrs.get(Keys.TOOL_RANK.name());
    if (toolNs != null) {
      int rank = toolRank == null ? 0 : rank(toolRank, Keys.TOOL_RANK.name());
      identity = Optional.of(Proc.of(toolNs, rank));
      kind = launcher ? ConnectorKind.LAUNCHER_GIVEN_ID : ConnectorKind.TOOL_GIVEN_ID;
    } else if (toolRank != null) {
      throw new IllegalArgumentException("pmix.tool.rank given without pmix.tool.nspace");
    } else {
      String envNs = nonEmpty(env.get("PMIX_NAMESPACE"));
      String envRank = nonEmpty(env.get("PMIX_RANK"));
      if (envNs != null && envRank != null) {
        int rank;
        try {
          rank = Integer.parseUnsignedInt(envRank.trim());
        } catch (NumberFormatException e) {
          throw new PmixException(Status.ERR_BAD_PARAM, "PMIX_RANK is not a rank: " + envRank, e);
        }
        identity = Optional.of(Proc.of(envNs, rank));
        kind = launcher ? ConnectorKind.LAUNCHER_CLIENT : ConnectorKind.TOOL_CLIENT;
      }
    }

    List<Target> targets = new ArrayList<>();
    String uri = string(attrs, Keys.SERVER_URI.name());
    if (uri == null) {
      uri = string(attrs, Keys.TCP_URI.name());
    }
    String attach = string(attrs, Keys.TOOL_ATTACHMENT_FILE.name());
    boolean toSystem = flag(attrs, Keys.CONNECT_TO_SYSTEM.name());
    boolean systemFirst = flag(attrs, Keys.CONNECT_SYSTEM_FIRST.name());
    Value pid = attrs.get(Keys.SERVER_PIDINFO.name());
    String nspace = string(attrs, Keys.SERVER_NSPACE.name());
    if (uri != null) {
      targets.add(
          uri.startsWith("file:")
              ? new Target.ByFile(Path.of(uri.substring(5)))
              : new Target.ByUri(uri));
    } else if (attach != null) {
      targets.add(new Target.ByFile(Path.of(attach)));
    } else if (toSystem) {
      targets.add(new Target.SystemServer());
    } else {
      if (systemFirst) {
        targets.add(new Target.SystemServer());
      }
      Optional<ServerAddress> launching = ServerAddress.fromEnvironment(env);
      if (pid != null) {
        long p = integer(pid, Keys.SERVER_PIDINFO.name());
        if (p <= 0) {
          throw new PmixException(Status.ERR_BAD_PARAM, "pmix.srvr.pidinfo must be positive");
        }
        targets.add(new Target.ByPid(p));
      } else if (nspace != null) {
        targets.add(new Target.ByNspace(nspace));
      } else if (launching.isPresent()) {
        targets.add(new Target.LaunchingServer(launching.get()));
      } else {
        targets.add(new Target.FirstFound());
      }
    }

    Value retries = attrs.get(Keys.CONNECT_MAX_RETRIES.name());
    Value delay = attrs.get(Keys.CONNECT_RETRY_DELAY.name());
    int attempts = DEFAULT_ATTEMPTS;
    if (retries != null) {
      long r = integer(retries, Keys.CONNECT_MAX_RETRIES.name());
      if (r < 0 || r > 10_000) {
        throw new PmixException(Status.ERR_BAD_PARAM, "pmix.tool.mretries out of range: " + r);
      }
      attempts = (int) r + 1;
    }
    Duration retryDelay = DEFAULT_RETRY_DELAY;
    if (delay != null) {
      long d = integer(delay, Keys.CONNECT_RETRY_DELAY.name());
      if (d < 0 || d > 3600) {
        throw new PmixException(Status.ERR_BAD_PARAM, "pmix.tool.retry out of range: " + d);
      }
      retryDelay = Duration.ofSeconds(d);
    }

    List<Info> connectInfo = new ArrayList<>();
    for (Info i : directives) {
      if (!CONSUMED.contains(i.key())) {
        connectInfo.add(i);
      }
    }
    return new ToolSettings(
        identity,
        kind,
        List.copyOf(targets),
        flag(attrs, Keys.TOOL_DO_NOT_CONNECT.name()),
        flag(attrs, Keys.TOOL_CONNECT_OPTIONAL.name()),
        hostname,
        systemTmpdir,
        sessionTmpdir,
        LocalProcess.chooseSecurity(env.get("PMIX_SECURITY_MODE")),
        BufferType.fromEnvironment(env),
        attempts,
        retryDelay,
        retries != null || delay != null,
        List.copyOf(connectInfo));
  }

  private static @Nullable String nonEmpty(@Nullable String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  private static @Nullable String firstEnv(Map<String, String> env, String... names) {
    for (String n : names) {
      String v = nonEmpty(env.get(n));
      if (v != null) {
        return v;
      }
    }
    return null;
  }

  private static @Nullable String string(Map<String, Value> attrs, String key) {
    Value v = attrs.get(key);
    if (v == null) {
      return null;
    }
    if (v instanceof Value.Str s && s.value() != null && !s.value().isEmpty()) {
      return s.value();
    }
    throw new PmixException(Status.ERR_BAD_PARAM, key + " must be a non-empty string, got " + v);
  }

  /** A boolean directive: present and true, or present without a boolean value. */
  private static boolean flag(Map<String, Value> attrs, String key) {
    Value v = attrs.get(key);
    return v != null && (!(v instanceof Value.Bool b) || b.value());
  }

  private static long integer(Value v, String key) {
    try {
      return v.asLong();
    } catch (IllegalStateException | ArithmeticException e) {
      throw new PmixException(Status.ERR_BAD_PARAM, key + " must be an integer, got " + v, e);
    }
  }

  private static int rank(Value v, String key) {
    if (v instanceof Value.UInt u && u.value() >= 0 && u.value() <= 0xFFFFFFFFL) {
      return (int) u.value();
    }
    long r = integer(v, key);
    if (r < 0 || r > 0xFFFFFFFFL) {
      throw new PmixException(Status.ERR_BAD_PARAM, key + " out of range: " + r);
    }
    return (int) r;
  }
}
