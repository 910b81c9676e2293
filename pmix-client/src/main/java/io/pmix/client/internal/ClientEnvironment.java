package io.pmix.client.internal;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.Immutable;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.BufferType;
import io.pmix.common.internal.connector.LocalProcess;
import io.pmix.common.internal.connector.ServerAddress;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a client learns from the environment a PMIx server gives its children (docs/transport.md
 * §3.3, §4.1, §8 and §9): who it is, where the server listens and how to talk to it. Built
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
      hostname = LocalProcess.localHostname();
    }
    BufferType bufferType = BufferType.fromEnvironment(env);
    Optional<String> version = Optional.ofNullable(firstNonEmpty(env.get("PMIX_VERSION")));

    Optional<ServerAddress> server = ServerAddress.fromEnvironment(env);
    if (server.isEmpty()) {
      // C 4.2.2 decides singleton-ness by the URI alone (docs/transport.md §4.1).
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
        LocalProcess.chooseSecurity(env.get("PMIX_SECURITY_MODE")),
        bufferType,
        hostname,
        version);
  }

  private static @Nullable String firstNonEmpty(@Nullable String s) {
    return s == null || s.isEmpty() ? null : s;
  }
}
