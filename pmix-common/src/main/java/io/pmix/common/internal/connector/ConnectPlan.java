package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ReplyLayout;
import java.time.Duration;

/**
 * Where and how a {@link ConnectorSession} connects.
 *
 * @param address the server
 * @param request the connect request to send (it fixes the connector's kind)
 * @param layout the layout of the server's reply
 * @param attempts how many TCP connects to try before giving up (at least 1)
 * @param retryDelay the pause between attempts
 */
public record ConnectPlan(
    ServerAddress address,
    ConnectRequest request,
    ReplyLayout layout,
    int attempts,
    Duration retryDelay) {
  /** Checks the fields. */
  public ConnectPlan {
    requireNonNull(address, "address");
    requireNonNull(request, "request");
    requireNonNull(layout, "layout");
    requireNonNull(retryDelay, "retryDelay");
    if (attempts < 1) {
      throw new IllegalArgumentException("attempts must be at least 1");
    }
  }
}
