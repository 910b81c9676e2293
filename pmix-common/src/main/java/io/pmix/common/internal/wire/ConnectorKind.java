package io.pmix.common.internal.wire;

import java.util.Optional;

/**
 * What kind of process opens a connection: the flag byte (field #4) of the connect request, which
 * decides the identity block that follows it and the layout of the server's reply
 * (docs/transport.md §2, §6.2, §6.3 and §7).
 *
 * <p>Flag 10 (a scheduler, OpenPMIx 5.0 and later) is deliberately absent: a 4.2.2 server closes
 * the connection on it, and so does ours.
 */
public enum ConnectorKind {
  /** Flag 0: a client launched by this server ({@code PMIx_Init} with PMIX_NAMESPACE/PMIX_RANK). */
  SIMPLE_CLIENT(0, false, true, false, false),
  /** Flag 1: a pre-4.0 tool; servers still parse it, 4.2.2 never sends it. */
  LEGACY_TOOL(1, true, false, false, false),
  /** Flag 2: a pre-4.0 launcher; servers still parse it, 4.2.2 never sends it. */
  LEGACY_LAUNCHER(2, true, false, false, true),
  /** Flag 3: a self-started tool without an identity; the server assigns one in its reply. */
  TOOL_NEEDS_ID(3, true, false, true, false),
  /** Flag 4: a self-started tool given PMIX_TOOL_NSPACE and PMIX_TOOL_RANK. */
  TOOL_GIVEN_ID(4, true, true, false, false),
  /** Flag 5: a tool started by a PMIx server, identified by PMIX_NAMESPACE/PMIX_RANK. */
  TOOL_CLIENT(5, true, true, false, false),
  /** Flag 6: a self-started launcher without an identity; the server assigns one. */
  LAUNCHER_NEEDS_ID(6, true, false, true, true),
  /** Flag 7: a self-started launcher given an identity. */
  LAUNCHER_GIVEN_ID(7, true, true, false, true),
  /** Flag 8: a launcher started by a PMIx server, identified by its environment. */
  LAUNCHER_CLIENT(8, true, true, false, true),
  /**
   * Flag 9: a singleton, a client started without a server that found one through {@code
   * pmix.sys.<host>}; its nspace is {@code singleton.<host>.<pid>}, rank 0. The reply layout
   * depends on the peer's version: see {@link ReplyLayout#forConnector}.
   */
  SINGLETON_CLIENT(9, true, true, false, false);

  private static final ConnectorKind[] BY_FLAG = values();

  private final int flag;
  private final boolean carriesIds;
  private final boolean carriesProcId;
  private final boolean needsId;
  private final boolean launcher;

  ConnectorKind(
      int flag, boolean carriesIds, boolean carriesProcId, boolean needsId, boolean launcher) {
    this.flag = flag;
    this.carriesIds = carriesIds;
    this.carriesProcId = carriesProcId;
    this.needsId = needsId;
    this.launcher = launcher;
  }

  /** The flag byte on the wire. */
  public int flag() {
    return flag;
  }

  /** Whether the identity block starts with the connector's euid and egid (every flag but 0). */
  public boolean carriesIds() {
    return carriesIds;
  }

  /** Whether the identity block carries an nspace and rank (flags 0, 4, 5, 7, 8, 9). */
  public boolean carriesProcId() {
    return carriesProcId;
  }

  /** Whether the server must assign an identity and send it in its reply (flags 3 and 6). */
  public boolean needsId() {
    return needsId;
  }

  /** Whether the connector declared itself a launcher (flags 2, 6, 7, 8). */
  public boolean isLauncher() {
    return launcher;
  }

  /** The kind with this flag byte, or empty for a flag OpenPMIx 4.2.2 does not accept. */
  public static Optional<ConnectorKind> fromFlag(int flag) {
    return flag >= 0 && flag < BY_FLAG.length ? Optional.of(BY_FLAG[flag]) : Optional.empty();
  }
}
