package io.pmix.server.internal;

import org.jspecify.annotations.Nullable;

/**
 * Registration of one rank ({@code pmix_rank_info_t}): created by register-client (or lazily by
 * a connection of a namespace whose ranks are all local), kept across finalize, removed only by
 * deregistration. Progress thread only.
 */
final class RankInfo {
  final int rank;
  final int uid;
  final int gid;
  final @Nullable Object hostObject;
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
