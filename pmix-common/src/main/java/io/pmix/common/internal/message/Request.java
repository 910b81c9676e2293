package io.pmix.common.internal.message;

import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;

/**
 * A request a client or tool sends: {@link #encode} writes its COMMAND unit and then its fields;
 * each record's static {@code decode} reads the fields after the COMMAND unit.
 */
public sealed interface Request extends Message
    permits ReqRequest,
        FinalizeRequest,
        CommitRequest,
        FenceNbRequest,
        GetNbRequest,
        PublishNbRequest,
        LookupNbRequest,
        UnpublishNbRequest,
        NotifyRequest,
        RegEventsRequest,
        DeregEventsRequest,
        QueryRequest,
        LogRequest,
        AbortRequest,
        SpawnNbRequest,
        ConnectNbRequest,
        DisconnectNbRequest,
        JobControlRequest,
        MonitorRequest,
        IofPullRequest,
        IofDeregRequest,
        IofPushRequest,
        GroupConstructRequest,
        GroupDestructRequest {
  /** The command this request is. */
  Command command();

  /** Writes the COMMAND unit, then {@link #encodeFields}. */
  @Override
  default void encode(PmixWriter w) {
    w.packByteEnum(io.pmix.common.DataType.COMMAND, command().code());
    encodeFields(w);
  }

  /** Writes the fields after the COMMAND unit. */
  void encodeFields(PmixWriter w);
}
