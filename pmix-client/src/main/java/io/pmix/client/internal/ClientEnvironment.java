package io.pmix.client.internal;

import static java.util.Objects.requireNonNull;

import com.google.common.base.Splitter;
import com.google.errorprone.annotations.Immutable;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.BufferType;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a client learns from the environment a PMIx server gives its children (transport.md
 * sections 3.3, 4.1, 8 and 9): who it is, where the server listens and how to talk to it. Built
 * once per init from a snapshot of the environment, so tests can hand in any map. Immutable.
 *
 * @param server the server to connect to, or empty for a singleton
 * @param nspace this process's namespace (empty for a singleton: the caller makes one up)
 * @param rank this process's rank (unsigned bits)
 * @param psecModule the security module to offer: {@code native} or {@code none}
 * @param bufferType the buffer kind to announce and speak
 * @param hostname this node's name as the server knows it ({@code PMIX_HOSTNAME}, else the
 *     local host name without its domain)
 * @param serverVersion the server's version ({@code PMIX_VERSION}), or empty
 */
@Immutable
public record ClientEnvironment(
    Optional<ServerAddress> server,
    Optional<String> nspace,
    int rank,
    String psecModule,
    BufferType bufferType,
    String hostname,
    Optional<String> serverVersion) {

  /**
   * The URI variables a client reads, best first, with the bfrops module each one selects. Only
   * the v4 family shares the codec this library speaks; v3 and v2 modules encode integers
   * differently (transport.md section 9.1), so their variables alone are not enough to connect.
   */
  private static final List<String[]> URI_VARIABLES =
      List.of(
          new String[] {"PMIX_SERVER_URI41", "v41"},
          new String[] {"PMIX_SERVER_URI4", "v4"},
          new String[] {"PMIX_SERVER_URI3", "v3"},
          new String[] {"PMIX_SERVER_URI21", "v21"},
          new String[] {"PMIX_SERVER_URI2", "v20"});

  /** Checks for nulls. */
  public ClientEnvironment {
    requireNonNull(server, "server");
    requireNonNull(nspace, "nspace");
    requireNonNull(psecModule, "psecModule");
    requireNonNull(bufferType, "bufferType");
    requireNonNull(hostname, "hostname");
    requireNonNull(serverVersion, "serverVersion");
  }

  /**
   * Reads the environment.
   *
   * @throws PmixException with {@code ERR_NOT_SUPPORTED} if the server can only be reached with a
   *     codec or security module this library lacks, {@code ERR_BAD_PARAM} if a variable is
   *     malformed, {@code ERR_DATA_VALUE_NOT_FOUND} if a namespace is given without a rank
   */
  public static ClientEnvironment parse(Map<String, String> env) {
    String hostname = firstNonEmpty(env.get("PMIX_HOSTNAME"));
    if (hostname == null) {
      hostname = localHostname();
    }
    BufferType bufferType = BufferType.fromEnvironment(env);
    Optional<String> version = Optional.ofNullable(firstNonEmpty(env.get("PMIX_VERSION")));

    Optional<ServerAddress> server = Optional.empty();
    for (String[] v : URI_VARIABLES) {
      String uri = firstNonEmpty(env.get(v[0]));
      if (uri == null) {
        continue;
      }
      if (!v[1].startsWith("v4")) {
        throw new PmixException(
            Status.ERR_NOT_SUPPORTED,
            "the server is named only by "
                + v[0]
                + ", which selects the "
                + v[1]
                + " codec; this library speaks v41 and v4");
      }
      server = Optional.of(ServerAddress.parse(uri, v[1]));
      break;
    }
    if (server.isEmpty()) {
      // C 4.2.2 decides singleton-ness by the URI alone (transport.md section 4.1).
      return new ClientEnvironment(
          Optional.empty(), Optional.empty(), 0, "native", bufferType, hostname, version);
    }

    String nspace = firstNonEmpty(env.get("PMIX_NAMESPACE"));
    if (nspace == null) {
      throw new PmixException(
          Status.ERR_INVALID_NAMESPACE, "PMIX_SERVER_URI is set but PMIX_NAMESPACE is not");
    }
    String rankText = firstNonEmpty(env.get("PMIX_RANK"));
    if (rankText == null) {
      throw new PmixException(
          Status.ERR_DATA_VALUE_NOT_FOUND, "PMIX_NAMESPACE is set but PMIX_RANK is not");
    }
    int rank;
    try {
      rank = Integer.parseUnsignedInt(rankText.trim());
    } catch (NumberFormatException e) {
      throw new PmixException(Status.ERR_BAD_PARAM, "PMIX_RANK is not a rank: " + rankText, e);
    }
    return new ClientEnvironment(
        server,
        Optional.of(nspace),
        rank,
        chooseSecurity(env.get("PMIX_SECURITY_MODE")),
        bufferType,
        hostname,
        version);
  }

  /**
   * The security module to offer. C picks the highest-priority module the list names, whatever
   * the order (munge 80, native 10, none 0); without munge support the best we can offer is
   * native, then none. An unset variable means the library default, native.
   */
  static String chooseSecurity(@Nullable String mode) {
    if (mode == null || mode.isBlank()) {
      return "native";
    }
    boolean none = false;
    for (String m : Splitter.on(',').split(mode)) {
      String name = m.trim().toLowerCase(Locale.ROOT);
      if (name.equals("native")) {
        return "native";
      }
      none |= name.equals("none");
    }
    if (none) {
      return "none";
    }
    throw new PmixException(
        Status.ERR_NOT_SUPPORTED,
        "PMIX_SECURITY_MODE=" + mode + " names no security module this library has (native, none)");
  }

  private static @Nullable String firstNonEmpty(@Nullable String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  /** The host name without a domain part, as C uses it when PMIX_HOSTNAME is not set. */
  static String localHostname() {
    try {
      String h = InetAddress.getLocalHost().getHostName();
      int dot = h.indexOf('.');
      return dot > 0 && !Character.isDigit(h.charAt(0)) ? h.substring(0, dot) : h;
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }

  /**
   * A server's URI as published in {@code PMIX_SERVER_URIxx}: {@code nspace.rank;tcp4://a.b.c.d:port}.
   *
   * @param serverNspace the server's namespace (everything before the last dot)
   * @param serverRank the server's rank
   * @param host the numeric address
   * @param port the TCP port
   * @param bfropsModule the codec module the variable's name selects
   */
  @Immutable
  public record ServerAddress(
      String serverNspace, int serverRank, String host, int port, String bfropsModule) {

    /**
     * Parses a URI the way a 4.2.2 client reads its environment: the identity is split at the
     * last dot, the address must begin with {@code tcp4://} or {@code tcp6://} and is split at the
     * last colon; brackets around an IPv6 address are tolerated.
     *
     * @throws PmixException with {@code ERR_BAD_PARAM} if the URI does not have that shape
     */
    static ServerAddress parse(String uri, String bfrops) {
      int semi = uri.indexOf(';');
      if (semi < 0 || uri.indexOf(';', semi + 1) >= 0) {
        throw bad(uri, "needs exactly one ';'");
      }
      String id = uri.substring(0, semi);
      String addr = uri.substring(semi + 1);
      int dot = id.lastIndexOf('.');
      if (dot <= 0) {
        throw bad(uri, "the server identity has no rank");
      }
      int rank;
      try {
        rank = Integer.parseUnsignedInt(id.substring(dot + 1));
      } catch (NumberFormatException e) {
        throw bad(uri, "the server rank is not a number");
      }
      String rest;
      if (addr.startsWith("tcp4://") || addr.startsWith("tcp6://")) {
        rest = addr.substring(7);
      } else {
        throw bad(uri, "the address must start with tcp4:// or tcp6://");
      }
      int colon = rest.lastIndexOf(':');
      if (colon <= 0) {
        throw bad(uri, "no port");
      }
      String host = rest.substring(0, colon);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      int port;
      try {
        port = Integer.parseInt(rest.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw bad(uri, "the port is not a number");
      }
      if (port <= 0 || port > 65535) {
        throw bad(uri, "port out of range");
      }
      return new ServerAddress(id.substring(0, dot), rank, host, port, bfrops);
    }

    private static PmixException bad(String uri, String why) {
      return new PmixException(Status.ERR_BAD_PARAM, "server URI '" + uri + "': " + why);
    }
  }
}
