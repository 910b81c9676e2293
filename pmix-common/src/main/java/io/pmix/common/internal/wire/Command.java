package io.pmix.common.internal.wire;

import java.util.Optional;

/**
 * The command a request opens with ({@code pmix_cmd_t}): one unsigned byte, packed with the
 * PMIX_COMMAND data type as the first unit of every connector-to-server request, and of the
 * server's tag-0 notification push (docs/commands.md §2).
 *
 * <p>Codes 0 to 32 are the OpenPMIx 4.2.2 set and mean the same in every later version. Later
 * versions appended codes (33 and up); a 4.2.2 server answers them, like any code it does not know,
 * with the single status unit ERR_NOT_SUPPORTED, and so should a server that implements only 0 to
 * 32. Lookup by code never fails on an unknown code: see {@link #fromCode}.
 */
public enum Command {
  /** Job information request sent right after the handshake; the reply has no status unit. */
  REQ(0),
  /** Abort the job. */
  ABORT(1),
  /** Commit the data put so far. */
  COMMIT(2),
  /** Fence, non-blocking. */
  FENCENB(3),
  /** Get, non-blocking. */
  GETNB(4),
  /** Finalize: the last request before the connector closes. */
  FINALIZE(5),
  /** Publish. */
  PUBLISHNB(6),
  /** Lookup. */
  LOOKUPNB(7),
  /** Unpublish. */
  UNPUBLISHNB(8),
  /** Spawn. */
  SPAWNNB(9),
  /** Connect. */
  CONNECTNB(10),
  /** Disconnect. */
  DISCONNECTNB(11),
  /** Notify an event (connector to server), and the server's event push on tag 0. */
  NOTIFY(12),
  /** Register event handlers. */
  REGEVENTS(13),
  /** Deregister event handlers: the only request without a reply. */
  DEREGEVENTS(14),
  /** Query. */
  QUERY(15),
  /** Log. */
  LOG(16),
  /** Allocation request. */
  ALLOC(17),
  /** Job control. */
  JOB_CONTROL(18),
  /** Process monitoring. */
  MONITOR(19),
  /** Get a credential. */
  GET_CREDENTIAL(20),
  /** Validate a credential. */
  VALIDATE_CRED(21),
  /** IOF pull (tools). */
  IOF_PULL(22),
  /** IOF push of stdin (tools). */
  IOF_PUSH(23),
  /** Group construct. */
  GROUP_CONSTRUCT(24),
  /** Group join: defined, never sent by 4.2.2 (joins travel as events). */
  GROUP_JOIN(25),
  /** Group invite: defined, never sent by 4.2.2 (invites travel as events). */
  GROUP_INVITE(26),
  /** Group leave: a 4.2.2 server answers NOT_SUPPORTED. */
  GROUP_LEAVE(27),
  /** Group destruct. */
  GROUP_DESTRUCT(28),
  /** IOF deregistration (tools). */
  IOF_DEREG(29),
  /** Fabric registration. */
  FABRIC_REGISTER(30),
  /** Fabric update. */
  FABRIC_UPDATE(31),
  /** Compute device distances. */
  COMPUTE_DEVICE_DISTANCES(32),
  /** Refresh a proc's cached data: OpenPMIx 5.0.0 and later. */
  REFRESH_CACHE(33),
  /** Resource block: OpenPMIx 6.0.0 and later. */
  RESBLK(34),
  /** Session control: OpenPMIx 6.0.0 and later. */
  SESSION_CTRL(35),
  /** System information request: OpenPMIx 6.0.0 and later. */
  REQ_SYSINFO(36),
  /** Resolve peers: OpenPMIx 5.0.7 and later. */
  RESOLVE_PEERS(37),
  /** Resolve node: OpenPMIx 5.0.7 and later. */
  RESOLVE_NODE(38),
  /** Job data again, for another GDS module: development head (7.0) only. */
  GDS_FALLBACK(39);

  private static final Command[] BY_CODE = new Command[256];

  static {
    for (Command c : values()) {
      BY_CODE[c.code] = c;
    }
  }

  private final int code;

  Command(int code) {
    this.code = code;
  }

  /** The wire code, 0 to 255. */
  public int code() {
    return code;
  }

  /** The wire code as the single byte written on the wire. */
  public byte wireByte() {
    return (byte) code;
  }

  /** Whether OpenPMIx 4.2.2 defines this command (codes 0 to 32). */
  public boolean isIn422() {
    return code <= COMPUTE_DEVICE_DISTANCES.code;
  }

  /**
   * The command with this code, or empty for a code this library does not know (including values
   * outside 0 to 255): a server answers those with ERR_NOT_SUPPORTED rather than failing.
   */
  public static Optional<Command> fromCode(int code) {
    return code >= 0 && code < BY_CODE.length
        ? Optional.ofNullable(BY_CODE[code])
        : Optional.empty();
  }
}
