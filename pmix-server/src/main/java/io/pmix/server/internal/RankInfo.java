package io.pmix.server.internal;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Registration of one rank ({@code pmix_rank_info_t}): created by register-client (or lazily by
 * a connection of a namespace whose ranks are all local), kept across finalize, removed only by
 * deregistration. Progress thread only.
 */
final class RankInfo {
  final int rank;
  /** Updated in place when the host registers the rank again (live peers keep this object). */
  int uid;
  int gid;
  @Nullable Object hostObject;
  /**
   * Whether the host registered this rank with register-client (false: created for a singleton
   * or tool connection). A tool on a host-registered rank keeps the client lifecycle.
   */
  boolean hostRegistered;
  /** Cleanup the host registered for this rank: run once, when the rank is deregistered. */
  final List<Runnable> epilogs = new ArrayList<>();
  /** The slot of the peer serving this rank, or -1: never cleared by finalize (tombstones). */
  int peerIndex = -1;
  /** Live processes (the client and its clones) for this rank. */
  int procCount;

  RankInfo(int rank, int uid, int gid, @Nullable Object hostObject) {
    this.rank = rank;
    this.uid = uid;
    this.gid = gid;
    this.hostObject = hostObject;
  }
}
