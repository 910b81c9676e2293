package io.pmix.common.internal.message;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * The GROUP_CONSTRUCT reply, whose layout changed twice (docs/commands.md §4.3; each version's
 * {@code construct_cbfunc}/{@code grp_cbfunc} in {@code pmix_client_group.c}):
 *
 * <ul>
 *   <li>{@link Layout#V4} (4.2.2): STATUS, SIZE context id ({@code SIZE_MAX} when none), the
 *       context id whatever the status (4.2.2's client reads it even past the end, then hands an
 *       uninitialised one to the caller, so it is always sent);
 *   <li>{@link Layout#V5} (5.0.x): STATUS; on success SIZE nmembers, PROC[nmembers] as one unit,
 *       SIZE context id ({@code SIZE_MAX} when none). 5.0.x's server then adds a BYTE_OBJECT of
 *       job data per other namespace, which its client never reads: not sent;
 *   <li>{@link Layout#V6} (6.0 and later): STATUS; on success SIZE nmembers, PROC[nmembers], BOOL
 *       whether a context id follows, [SIZE context id], SIZE ninfo, then each {@code
 *       pmix.grp.info} INFO in a unit of its own (the client stores their values qualified by
 *       the context id).
 * </ul>
 *
 * @param layout which of the three
 * @param status the outcome
 * @param members the final membership (sent on success, except in {@link Layout#V4})
 * @param contextId the context id the host assigned, if one was asked for
 * @param groupInfo the members' {@code pmix.grp.info} contributions ({@link Layout#V6} only)
 */
public record GroupConstructReply(
    Layout layout, Status status, List<Proc> members, OptionalLong contextId, List<Info> groupInfo)
    implements Message {
  /** {@code SIZE_MAX}: the context id 4.2.2 and 5.0.x send when none was assigned. */
  public static final long NO_CONTEXT_ID = -1L;

  /** The reply's layout, chosen by the client's version ({@link #forVersion}). */
  public enum Layout {
    /** OpenPMIx 4.x. */
    V4,
    /** OpenPMIx 5.0.x. */
    V5,
    /** OpenPMIx 6.0 and later. */
    V6;

    /** The layout a client of this major version reads. */
    public static Layout forVersion(int major) {
      return major < 5 ? V4 : major == 5 ? V5 : V6;
    }
  }

  /** Checks the fields and copies the lists. */
  public GroupConstructReply {
    requireNonNull(layout, "layout");
    requireNonNull(status, "status");
    requireNonNull(contextId, "contextId");
    members = List.copyOf(members);
    groupInfo = List.copyOf(groupInfo);
  }

  /** A failure: the status alone (and, in {@link Layout#V4}, no context id). */
  public static GroupConstructReply failure(Layout layout, Status status) {
    return new GroupConstructReply(layout, status, List.of(), OptionalLong.empty(), List.of());
  }

  @Override
  public void encode(PmixWriter w) {
    w.packStatus(status);
    if (layout == Layout.V4) {
      w.packSize(contextId.orElse(NO_CONTEXT_ID));
      return;
    }
    if (!status.isSuccess()) {
      return;
    }
    w.packSize(members.size());
    if (!members.isEmpty()) {
      w.pack(DataType.PROC, members);
    }
    if (layout == Layout.V5) {
      w.packSize(contextId.orElse(NO_CONTEXT_ID));
      return;
    }
    w.packBool(contextId.isPresent());
    if (contextId.isPresent()) {
      w.packSize(contextId.getAsLong());
    }
    w.packSize(groupInfo.size());
    for (Info i : groupInfo) {
      w.packInfos(List.of(i));
    }
  }

  /**
   * Reads a reply of {@code layout}: a {@code SIZE_MAX} context id reads as none.
   *
   * @throws PmixException {@code ERR_LOST_CONNECTION} for an empty reply, or the status of a
   *     malformed field
   */
  public static GroupConstructReply decode(PmixReader r, Layout layout) {
    return Units.decoding(
        "GROUP_CONSTRUCT reply",
        () -> {
          Status status = Units.readStatus(r);
          if (layout == Layout.V4) {
            return new GroupConstructReply(
                layout, status, List.of(), contextIdOf(r.unpackSize()), List.of());
          }
          if (!status.isSuccess() || !r.hasRemaining()) {
            return failure(layout, status);
          }
          int n = Units.readCount(r);
          List<Proc> members = n == 0 ? List.of() : Units.procs(r.unpack(DataType.PROC, n));
          if (layout == Layout.V5) {
            return new GroupConstructReply(
                layout, status, members, contextIdOf(r.unpackSize()), List.of());
          }
          OptionalLong ctx =
              r.unpackBool() ? OptionalLong.of(r.unpackSize()) : OptionalLong.empty();
          int ninfo = Units.readCount(r);
          List<Info> info = new ArrayList<>(ninfo);
          for (int i = 0; i < ninfo; i++) {
            info.addAll(r.unpackInfos(1));
          }
          return new GroupConstructReply(layout, status, members, ctx, info);
        });
  }

  private static OptionalLong contextIdOf(long v) {
    return v == NO_CONTEXT_ID ? OptionalLong.empty() : OptionalLong.of(v);
  }
}
