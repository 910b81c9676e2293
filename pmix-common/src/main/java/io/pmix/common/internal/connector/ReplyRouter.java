package io.pmix.common.internal.connector;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.wire.TagAllocator;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The requests waiting for their replies, by tag: a request gets a fresh dynamic tag when it is
 * sent ({@link #post}), the reply on that tag goes to its handler and frees the tag ({@link
 * #reply}), and a lost connection fails them all ({@link #failAll}). Tags are never handed out
 * twice while a reply is outstanding (see {@link TagAllocator}).
 *
 * <p>Confined to the progress thread.
 */
final class ReplyRouter implements SessionPart {
  private static final System.Logger LOG = LazyLogger.of(ReplyRouter.class);

  @Bookkept("session.outstandingTags")
  private final TagAllocator tags = new TagAllocator();

  @Bookkept("session.pendingReplies")
  private final Map<Integer, ReplyHandler> pending = new HashMap<>();

  /** A fresh tag, with {@code handler} waiting on it. */
  int post(ReplyHandler handler) {
    int tag = tags.allocate();
    pending.put(tag, handler);
    return tag;
  }

  /**
   * Gives up waiting on {@code tag} (its request could not be sent), if {@code handler} still
   * waits there, and frees the tag.
   *
   * @return whether it was still waiting
   */
  boolean cancel(int tag, ReplyHandler handler) {
    if (!pending.remove(tag, handler)) {
      return false;
    }
    tags.release(tag);
    return true;
  }

  /**
   * A tag for a request that has no reply (DEREGEVENTS): it still consumes one, as in C, but
   * nothing waits on it.
   */
  int oneWayTag() {
    int tag = tags.allocate();
    tags.release(tag);
    return tag;
  }

  /**
   * Hands a reply to the request waiting on {@code tag}; a handler's PmixException, or any other
   * failure reading the reply, fails that request instead.
   *
   * @return false when nothing waited on the tag
   */
  boolean reply(int tag, PmixReader payload) {
    ReplyHandler h = pending.remove(tag);
    if (h == null) {
      // Unknown reserved tags (6.x additions) are ignored, as a newer peer may send them.
      LOG.log(
          Level.DEBUG,
          "message on tag {0} without a request; dropped",
          Integer.toUnsignedString(tag));
      return false;
    }
    tags.release(tag);
    try {
      h.onReply(payload);
    } catch (PmixException e) {
      h.onFailure(e);
    } catch (RuntimeException e) {
      h.onFailure(new PmixException(Status.ERR_UNPACK_FAILURE, "malformed reply", e));
    }
    return true;
  }

  /** Whether any request waits for its reply. */
  boolean hasPending() {
    return !pending.isEmpty();
  }

  /** Fails every request waiting for a reply and frees its tag. */
  void failAll(PmixException e) {
    List<ReplyHandler> hs = new ArrayList<>(pending.values());
    for (Integer t : pending.keySet()) {
      tags.release(t);
    }
    pending.clear();
    for (ReplyHandler h : hs) {
      h.onFailure(e);
    }
  }

  @Override
  public Map<String, Long> bookkeeping() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("session.pendingReplies", (long) pending.size());
    m.put("session.outstandingTags", (long) tags.outstandingCount());
    return m;
  }

  @Override
  public void release() {
    for (Integer t : pending.keySet()) {
      tags.release(t);
    }
    pending.clear();
  }
}
