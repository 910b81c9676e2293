package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.Immutable;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A server's URI as servers publish it (in {@code PMIX_SERVER_URIxx} and on line 1 of a rendezvous
 * file): {@code nspace.rank;tcp4://a.b.c.d:port} (docs/transport.md §3.2), with the bfrops module
 * the connector will speak to it. Immutable.
 *
 * @param serverNspace the server's namespace (everything before the last dot)
 * @param serverRank the server's rank
 * @param host the numeric address
 * @param port the TCP port
 * @param bfropsModule the codec module to announce: the URI variable's name selects it for a
 *     client, a tool always speaks its library's best ({@code v41})
 */
@Immutable
public record ServerAddress(
    String serverNspace, int serverRank, String host, int port, String bfropsModule) {

  /**
   * The URI variables a server sets for its children, best first, with the bfrops module each one
   * selects (docs/transport.md §3.3 and §4.1). Only the v4 family shares the codec this library
   * speaks; v3 and v2 modules encode integers differently (section 9.1), so their variables alone
   * are not enough to connect.
   */
  private static final List<String[]> URI_VARIABLES =
      List.of(
          new String[] {"PMIX_SERVER_URI41", "v41"},
          new String[] {"PMIX_SERVER_URI4", "v4"},
          new String[] {"PMIX_SERVER_URI3", "v3"},
          new String[] {"PMIX_SERVER_URI21", "v21"},
          new String[] {"PMIX_SERVER_URI2", "v20"});

  /** Checks for nulls. */
  public ServerAddress {
    requireNonNull(serverNspace, "serverNspace");
    requireNonNull(host, "host");
    requireNonNull(bfropsModule, "bfropsModule");
  }

  /**
   * Parses a URI: the identity is split at the last dot (as a 4.2.2 connector reads its
   * environment and rendezvous files; a C tool handed the URI as an attribute splits at the first
   * dot, which only matters for dotted server namespaces, which servers must not use), the address
   * must begin with {@code tcp4://} or {@code tcp6://} and is split at the last colon; brackets
   * around an IPv6 address are tolerated.
   *
   * @throws PmixException with {@code ERR_BAD_PARAM} if the URI does not have that shape
   */
  public static ServerAddress parse(String uri, String bfrops) {
    requireNonNull(uri, "uri");
    requireNonNull(bfrops, "bfrops");
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

  /**
   * The server a launching server named in {@code env}: the first URI variable set (by priority,
   * not by order), with the module its name selects.
   *
   * @return empty if no URI variable is set
   * @throws PmixException with {@code ERR_NOT_SUPPORTED} if only variables of codecs this library
   *     lacks are set, {@code ERR_BAD_PARAM} if the URI is malformed
   */
  public static Optional<ServerAddress> fromEnvironment(Map<String, String> env) {
    for (String[] v : URI_VARIABLES) {
      String uri = env.get(v[0]);
      if (uri == null || uri.isEmpty()) {
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
      return Optional.of(parse(uri, v[1]));
    }
    return Optional.empty();
  }

  private static PmixException bad(String uri, String why) {
    return new PmixException(Status.ERR_BAD_PARAM, "server URI '" + uri + "': " + why);
  }

  @Override
  public String toString() {
    return serverNspace
        + "."
        + Integer.toUnsignedString(serverRank)
        + " at "
        + host
        + ":"
        + port
        + " ("
        + bfropsModule
        + ")";
  }
}
