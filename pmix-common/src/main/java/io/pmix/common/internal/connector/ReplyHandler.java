package io.pmix.common.internal.connector;

import io.pmix.common.PmixException;
import io.pmix.common.codec.PmixReader;

/** What a request waits for; both methods run on the progress thread. */
public interface ReplyHandler {
  /** The reply arrived; a thrown exception is turned into {@link #onFailure}. */
  void onReply(PmixReader reply);

  /** The request failed (connection lost, finalized, malformed reply). */
  void onFailure(PmixException e);
}
