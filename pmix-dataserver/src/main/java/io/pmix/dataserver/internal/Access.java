package io.pmix.dataserver.internal;

import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableSet;
import com.google.errorprone.annotations.Immutable;
import io.pmix.dataserver.Identity;
import java.util.Set;

/**
 * Who may read an item ({@code PMIX_ACCESS_PERMISSIONS}): the user and group ids the publisher
 * named, or, when it named none, only the publisher's own user. Immutable.
 *
 * <p>Each list grants: a reader is admitted when its uid is on the uid list or its gid is on the
 * gid list, as the Standard words them ("Array of effective UIDs that are allowed to access", and
 * likewise for GIDs). Naming lists replaces the owner-only rule rather than adding to it, so a
 * publisher that leaves itself off its own lists cannot read the item (it may still remove it: that
 * is ownership, decided elsewhere).
 *
 * @param uids the uids admitted
 * @param gids the gids admitted
 */
@Immutable
public record Access(ImmutableSet<Integer> uids, ImmutableSet<Integer> gids) {
  /** No lists: the publisher's own user only. */
  public static final Access OWNER_ONLY = new Access(ImmutableSet.of(), ImmutableSet.of());

  /** Copies the lists. */
  public Access {
    requireNonNull(uids, "uids");
    requireNonNull(gids, "gids");
  }

  /** Access for these lists. */
  public static Access of(Set<Integer> uids, Set<Integer> gids) {
    return new Access(ImmutableSet.copyOf(uids), ImmutableSet.copyOf(gids));
  }

  /** Whether the publisher named no accessors. */
  public boolean ownerOnly() {
    return uids.isEmpty() && gids.isEmpty();
  }

  /** How many ids the lists hold (each is charged to the publisher). */
  public int idCount() {
    return uids.size() + gids.size();
  }

  /** Whether {@code reader} may read an item {@code owner} published under these permissions. */
  public boolean permits(Identity owner, Identity reader) {
    if (ownerOnly()) {
      return sameUser(owner, reader);
    }
    return uids.contains(reader.uid())
        || (reader.gid() != Identity.UNKNOWN && gids.contains(reader.gid()));
  }

  /**
   * Whether two callers are the same user: equal uids, and equal gids where both are known. This
   * is the ownership test (only the owner removes) and the owner-only read rule.
   */
  public static boolean sameUser(Identity a, Identity b) {
    if (a.uid() != b.uid()) {
      return false;
    }
    return a.gid() == Identity.UNKNOWN || b.gid() == Identity.UNKNOWN || a.gid() == b.gid();
  }
}
