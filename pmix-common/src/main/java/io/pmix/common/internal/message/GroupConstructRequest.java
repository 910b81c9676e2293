package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * GROUP_CONSTRUCT (24): STRING group id, SIZE nprocs, PROC[nprocs] as one unit, SIZE ninfo,
 * [INFO[ninfo]] (docs/commands.md §4.3; {@code PMIx_Group_construct_nb} in {@code
 * pmix_client_group.c}, the same from v4.2.2 to master). Answered by a {@link
 * GroupConstructReply}.
 *
 * @param groupId the group's name, chosen by the callers
 * @param procs the members, sorted as a fence's participants; at least one
 * @param directives e.g. {@code pmix.grp.actxid}, {@code pmix.timeout}, {@code pmix.grp.info}
 */
public record GroupConstructRequest(String groupId, List<Proc> procs, List<Info> directives)
    implements Request {
  /**
   * Copies the lists.
   *
   * @throws IllegalArgumentException if there is no proc (C: PMIX_ERR_BAD_PARAM)
   */
  public GroupConstructRequest {
    requireNonNull(groupId, "groupId");
    procs = List.copyOf(procs);
    directives = List.copyOf(directives);
    if (procs.isEmpty()) {
      throw new IllegalArgumentException("GROUP_CONSTRUCT needs at least one proc");
    }
  }

  @Override
  public Command command() {
    return Command.GROUP_CONSTRUCT;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    w.packString(groupId);
    Units.writeParticipants(w, procs);
    Units.writeInfos(w, directives);
  }

  /**
   * Reads the fields after the COMMAND unit, the procs sorted in {@link
   * FenceNbRequest#PARTICIPANT_ORDER}.
   *
   * @throws io.pmix.common.PmixException {@code BAD_PARAM} without a group id or a proc, or with a
   *     count beyond the reader's limits
   */
  public static GroupConstructRequest decode(PmixReader r) {
    return Units.decoding(
        "GROUP_CONSTRUCT",
        () ->
            new GroupConstructRequest(
                Units.readGroupId(r, "GROUP_CONSTRUCT"),
                Units.readParticipants(r, "GROUP_CONSTRUCT"),
                Units.readInfos(r)));
  }
}
