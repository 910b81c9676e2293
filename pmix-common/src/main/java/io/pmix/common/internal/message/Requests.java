package io.pmix.common.internal.message;

import io.pmix.common.DataType;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.wire.Command;
import java.util.Optional;

/** Reads a request whole: its COMMAND unit, then the fields of that command's record. */
public final class Requests {
  private Requests() {}

  /**
   * Reads the COMMAND unit and the request it opens, as a peer of version 3 or later writes it.
   *
   * @throws PmixException {@code ERR_NOT_SUPPORTED} for a command no record describes, or the
   *     status of the malformed field
   */
  public static Request decode(PmixReader r) {
    return decode(r, true);
  }

  /**
   * As {@link #decode(PmixReader)}; {@code logWithTime} as {@link LogRequest#carriesTime} says
   * for the peer's version.
   */
  public static Request decode(PmixReader r, boolean logWithTime) {
    int code = r.unpackByteEnum(DataType.COMMAND);
    Optional<Command> cmd = Command.fromCode(code);
    if (cmd.isEmpty()) {
      throw new PmixException(Status.ERR_NOT_SUPPORTED, "unknown command " + code);
    }
    return decodeFields(cmd.get(), r, logWithTime);
  }

  /**
   * Reads the fields of {@code cmd}'s request, its COMMAND unit having been read.
   *
   * @throws PmixException {@code ERR_NOT_SUPPORTED} for a command no record describes
   */
  public static Request decodeFields(Command cmd, PmixReader r, boolean logWithTime) {
    switch (cmd) {
      case REQ:
        return ReqRequest.decode(r);
      case ABORT:
        return AbortRequest.decode(r);
      case COMMIT:
        return CommitRequest.decode(r);
      case FENCENB:
        return FenceNbRequest.decode(r);
      case GETNB:
        return GetNbRequest.decode(r);
      case FINALIZE:
        return FinalizeRequest.decode(r);
      case PUBLISHNB:
        return PublishNbRequest.decode(r);
      case LOOKUPNB:
        return LookupNbRequest.decode(r);
      case UNPUBLISHNB:
        return UnpublishNbRequest.decode(r);
      case SPAWNNB:
        return SpawnNbRequest.decode(r);
      case CONNECTNB:
        return ConnectNbRequest.decode(r);
      case DISCONNECTNB:
        return DisconnectNbRequest.decode(r);
      case NOTIFY:
        return NotifyRequest.decode(r);
      case REGEVENTS:
        return RegEventsRequest.decode(r);
      case DEREGEVENTS:
        return DeregEventsRequest.decode(r);
      case QUERY:
        return QueryRequest.decode(r);
      case LOG:
        return LogRequest.decode(r, logWithTime);
      case JOB_CONTROL:
        return JobControlRequest.decode(r);
      case MONITOR:
        return MonitorRequest.decode(r);
      case IOF_PULL:
        return IofPullRequest.decode(r);
      case IOF_PUSH:
        return IofPushRequest.decode(r);
      case IOF_DEREG:
        return IofDeregRequest.decode(r);
      case GROUP_CONSTRUCT:
        return GroupConstructRequest.decode(r);
      case GROUP_DESTRUCT:
        // The 5.0+ layout; a server reads a 4.2.2 peer's with GroupDestructRequest.decode itself.
        return GroupDestructRequest.decode(r, true);
      default:
        throw new PmixException(Status.ERR_NOT_SUPPORTED, "no request record for " + cmd);
    }
  }
}
