package io.pmix.common.internal.wire;

import static java.util.Objects.requireNonNull;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which fields the server's answer to a connect request has (docs/transport.md §7), and so how
 * many bytes a connector reads when the answer is a success.
 */
public enum ReplyLayout {
  /** Status and index: {@link ClientReply}, 8 bytes. */
  CLIENT(ClientReply.LENGTH),
  /** Status, server nspace and rank, validation status: {@link ToolReply.Full}, 268 bytes. */
  TOOL(4 + WireIo.FIX256 + 4 + 4),
  /** As {@link #TOOL} with the assigned nspace and rank after the status: 528 bytes. */
  TOOL_WITH_ASSIGNED_ID(4 + 2 * (WireIo.FIX256 + 4) + 4);

  /** Compiled on first use: only singletons need it, and a client's init should not pay it. */
  private static final class Versions {
    // major.minor[.release] in decimal at the start; what follows the release (rc2, a1, ...) is
    // ignored, as by the C parser. A leading 'v' is tolerated, as rendezvous files may carry one.
    static final Pattern VERSION =
        Pattern.compile("v?(\\d{1,9})\\.(\\d{1,9})(?:\\.(\\d{1,9}))?.*", Pattern.DOTALL);
  }

  private final int length;

  ReplyLayout(int length) {
    this.length = length;
  }

  /** The length in bytes of a successful reply in this layout. */
  public int length() {
    return length;
  }

  /**
   * The layout the reply to a connector of {@code kind} has. It is fixed by the kind except for a
   * singleton, where OpenPMIx changed it in 5.0.9 (see {@link #singletonUsesClientLayout}).
   *
   * @param version for a server choosing how to answer, the connector's version string (field #6 of
   *     its request); for a Java singleton choosing how to read, the server's version (line 2 of
   *     the {@code pmix.sys.<host>} file it found the server through)
   */
  public static ReplyLayout forConnector(ConnectorKind kind, String version) {
    requireNonNull(kind, "kind");
    requireNonNull(version, "version");
    if (kind == ConnectorKind.SIMPLE_CLIENT) {
      return CLIENT;
    }
    if (kind.needsId()) {
      return TOOL_WITH_ASSIGNED_ID;
    }
    if (kind == ConnectorKind.SINGLETON_CLIENT && singletonUsesClientLayout(version)) {
      return CLIENT;
    }
    return TOOL;
  }

  /**
   * Whether a singleton's connection uses the client layout: OpenPMIx 5.0.9 and later do, except
   * the 6.0.x series (branched before the change), which keeps the tool layout like every version
   * before 5.0.9. A version string that does not start with major.minor is taken as old, since
   * every OpenPMIx that sends one does.
   */
  public static boolean singletonUsesClientLayout(String version) {
    Matcher m = Versions.VERSION.matcher(requireNonNull(version, "version"));
    if (!m.matches()) {
      return false;
    }
    int major = Integer.parseInt(m.group(1));
    int minor = Integer.parseInt(m.group(2));
    int release = m.group(3) == null ? 0 : Integer.parseInt(m.group(3));
    if (major == 6 && minor == 0) {
      return false;
    }
    return compare(major, minor, release, 5, 0, 9) >= 0;
  }

  private static int compare(
      int major, int minor, int release, int major2, int minor2, int release2) {
    if (major != major2) {
      return Integer.compare(major, major2);
    }
    if (minor != minor2) {
      return Integer.compare(minor, minor2);
    }
    return Integer.compare(release, release2);
  }
}
