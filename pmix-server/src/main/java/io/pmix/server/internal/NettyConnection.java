package io.pmix.server.internal;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.util.AttributeKey;
import io.pmix.common.codec.WireBuffer;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ServerConnection} on a Netty channel: frames go out through {@link SocketSender}, the
 * close is the channel's. One per channel, kept in the channel's attributes ({@link #of}), so the
 * pipeline's handlers and the tests' embedded channels reach the same one.
 */
public final class NettyConnection extends ServerConnection {
  private static final AttributeKey<NettyConnection> KEY =
      AttributeKey.valueOf("pmix.server.connection");

  private final Channel channel;
  private @Nullable CompletableFuture<Void> closed;

  private NettyConnection(Channel channel) {
    this.channel = channel;
  }

  /** The connection of {@code channel}, made on first use. Progress thread (the channel's loop). */
  public static NettyConnection of(Channel channel) {
    NettyConnection c = channel.attr(KEY).get();
    if (c == null) {
      c = new NettyConnection(requireNonNull(channel, "channel"));
      channel.attr(KEY).set(c);
    }
    return c;
  }

  /** The channel underneath (the transport's own code and tests). */
  public Channel channel() {
    return channel;
  }

  @Override
  public boolean isOpen() {
    return channel.isActive();
  }

  @Override
  public void send(WireBuffer frame, int length) {
    if (length > 0) {
      SocketSender.send(channel, frame, length);
    }
  }

  @Override
  public void close() {
    ChannelFuture unused = channel.close();
  }

  @Override
  public CompletableFuture<Void> closed() {
    CompletableFuture<Void> c = closed;
    if (c == null) {
      CompletableFuture<Void> made = new CompletableFuture<>();
      ChannelFuture unused =
          channel
              .closeFuture()
              .addListener(
                  new ChannelFutureListener() {
                    @Override
                    public void operationComplete(ChannelFuture f) {
                      made.complete(null);
                    }
                  });
      closed = made;
      c = made;
    }
    return c;
  }

  @Override
  public String toString() {
    return channel.toString();
  }
}
