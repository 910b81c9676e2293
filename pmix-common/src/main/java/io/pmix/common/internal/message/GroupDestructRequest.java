package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Command;
import java.util.List;

/**
 * GROUP_DESTRUCT (28) in two layouts (docs/commands.md §4.3): from OpenPMIx 5.0 on, STRING group
 * id, SIZE nmembers, PROC[nmembers] as one unit, SIZE ninfo, [INFO[ninfo]] (the client sends the
 * membership it was given, "the server isn't storing it"); in 4.2.2, STRING group id, SIZE
 * ninfo, [INFO[ninfo]] (the server looks the membership up in the groups it keeps). Answered by a
 * status.
 *
 * @param groupId the group's name
 * @param members the members as the client knows them, sorted; empty in the 4.2.2 layout
 * @param directives e.g. {@code pmix.timeout}
 */
public record GroupDestructRequest(String groupId, List<Proc> members, List<Info> directives)
    implements Request {
  /** Copies the lists. */
  public GroupDestructRequest {
    requireNonNull(groupId, "groupId");
    members = List.copyOf(members);
    directives = List.copyOf(directives);
  }

  /** Whether this request has the 5.0+ layout (it carries the membership). */
  public boolean carriesMembers() {
    return !members.isEmpty();
  }

  @Override
  public Command command() {
    return Command.GROUP_DESTRUCT;
  }

  @Override
  public void encodeFields(PmixWriter w) {
    w.packString(groupId);
    if (!members.isEmpty()) {
      Units.writeParticipants(w, members);
    }
    Units.writeInfos(w, directives);
  }

  /**
   * Reads the fields after the COMMAND unit.
   *
   * @param withMembers the 5.0+ layout (the peer's version is 5 or later); a 5.0+ request with
   *     no member is refused with BAD_PARAM, as 5.0.11's server does
   * @throws io.pmix.common.PmixException {@code BAD_PARAM} without a group id, without a member
   *     (5.0+), or with a count beyond the reader's limits
   */
  public static GroupDestructRequest decode(PmixReader r, boolean withMembers) {
    return Units.decoding(
        "GROUP_DESTRUCT",
        () -> {
          String id = Units.readGroupId(r, "GROUP_DESTRUCT");
          List<Proc> members =
              withMembers ? Units.readParticipants(r, "GROUP_DESTRUCT") : List.of();
          return new GroupDestructRequest(id, members, Units.readInfos(r));
        });
  }
}
