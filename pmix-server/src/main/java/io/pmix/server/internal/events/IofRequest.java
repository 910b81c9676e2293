package io.pmix.server.internal.events;

import io.pmix.common.Proc;
import io.pmix.server.internal.lifecycle.Peer;
import java.util.ArrayList;
import java.util.List;

/**
 * A peer's request to receive the forwarded output of some processes ({@code pmix_iof_req_t}).
 * Client-scoped: it is pruned when its requester finalizes, disconnects or is deregistered, and
 * its sources are pruned when their namespace is deregistered. Progress thread only.
 */
final class IofRequest {
  final Peer requester;
  /** The processes forwarded from; the rank may be the wildcard. */
  final List<Proc> sources;
  /** The {@code pmix_iof_channel_t} bits. */
  final int channels;

  IofRequest(Peer requester, List<Proc> sources, int channels) {
    this.requester = requester;
    this.sources = new ArrayList<>(sources);
    this.channels = channels;
  }
}
