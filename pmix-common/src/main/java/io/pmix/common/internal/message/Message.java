package io.pmix.common.internal.message;

import io.pmix.common.codec.PmixWriter;

/** A message of the PMIx protocol that a peer writes: a request, a reply or a push. */
public interface Message {
  /** Appends this message's body to {@code w}, in {@code w}'s format. */
  void encode(PmixWriter w);
}
