package io.pmix.server.internal.lifecycle;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Registration of one rank ({@code pmix_rank_info_t}, docs/lifecycle.md §6.2.2): created by
 * register-client (or lazily by a singleton's or tool's connection), kept across finalize,
 * removed only by deregistration. Its two lifecycle counters, the peer index and the live
 * process count, are written only by {@link PeerLifecycle} (through the package-private
 * mutators here). Progress thread only.
 */
public final class RankInfo {
  private final int rank;
  private int uid;
  private int gid;
  private @Nullable Object hostObject;
  /**
   * Whether the host registered this rank with register-client (false: created for a singleton
   * or tool connection). A tool on a host-registered rank keeps the client lifecycle.
   */
  private boolean hostRegistered;
  /** Cleanup the host registered for this rank: run once, when the rank is deregistered. */
  private final List<Runnable> epilogs = new ArrayList<>();
  /** The slot of the peer serving this rank, or -1: never cleared by finalize (tombstones). */
  private int peerIndex = -1;
  /** Live processes (the client and its clones) for this rank. */
  private int procCount;

  RankInfo(int rank, int uid, int gid, @Nullable Object hostObject) {
    this.rank = rank;
    this.uid = uid;
    this.gid = gid;
    this.hostObject = hostObject;
  }

  /** The rank. */
  public int rank() {
    return rank;
  }

  /** The uid the rank is registered with. */
  public int uid() {
    return uid;
  }

  /** The gid the rank is registered with. */
  public int gid() {
    return gid;
  }

  /** What the host handed register-client, given back in its upcalls. */
  public @Nullable Object hostObject() {
    return hostObject;
  }

  /** Whether the host registered the rank (rather than a singleton or tool connection). */
  public boolean hostRegistered() {
    return hostRegistered;
  }

  /** The slot of the peer serving the rank, or -1. */
  public int peerIndex() {
    return peerIndex;
  }

  /** The rank's live processes (clones included). */
  public int procCount() {
    return procCount;
  }

  /** The rank's epilogs, in registration order. */
  List<Runnable> epilogs() {
    return epilogs;
  }

  /** The host registers the rank (again): updated in place, its live peers keep this object. */
  void hostRegistration(int newUid, int newGid, @Nullable Object newHostObject) {
    uid = newUid;
    gid = newGid;
    hostObject = newHostObject;
    hostRegistered = true;
  }

  // ---- the lifecycle counters: PeerLifecycle only ----

  /** A new peer for the rank connected at {@code index}: it serves the rank now. */
  void connected(int index) {
    peerIndex = index;
    procCount++;
  }

  /** One of the rank's processes is gone. */
  void processGone() {
    procCount = Math.max(0, procCount - 1);
  }

  /** The index names {@code index} (a live sibling) or nothing (-1). */
  void pointAt(int index) {
    peerIndex = index;
  }

  /** The rank is released for good (deregistration): no peer, no process. */
  void released() {
    peerIndex = -1;
    procCount = 0;
  }
}
