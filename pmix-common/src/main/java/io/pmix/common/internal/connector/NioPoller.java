package io.pmix.common.internal.connector;

import io.pmix.common.internal.LazyLogger;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * A {@link Poller} on a {@link Selector} and {@link SocketChannel}s: where pmix-java's native
 * library does not load (another operating system or architecture than the build's). The {@link
 * Poller} constants are {@link SelectionKey}'s.
 */
final class NioPoller extends Poller {
  private static final System.Logger LOG = LazyLogger.of(NioPoller.class);

  private final Selector selector;

  private NioPoller(Selector selector) {
    this.selector = selector;
  }

  // Declared as the supertype: verifying Poller.open then does not load this class, which a JVM
  // that polls through pmix-java's library never uses.
  static Poller open() throws IOException {
    return new NioPoller(Selector.open());
  }

  @Override
  StreamSocket socket(ProgressLoop.Registrant registrant) throws IOException {
    SocketChannel ch = SocketChannel.open();
    try {
      ch.configureBlocking(false);
      return new Socket(ch, ch.register(selector, 0, registrant));
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  @Override
  void poll(long timeoutMillis) throws IOException {
    if (timeoutMillis == 0) {
      selector.selectNow();
    } else if (timeoutMillis < 0) {
      selector.select();
    } else {
      selector.select(timeoutMillis);
    }
    Iterator<SelectionKey> it = selector.selectedKeys().iterator();
    while (it.hasNext()) {
      SelectionKey k = it.next();
      it.remove();
      int ops;
      try {
        ops = k.readyOps();
      } catch (CancelledKeyException e) {
        continue; // closed by an earlier registrant of this round
      }
      tell((ProgressLoop.Registrant) k.attachment(), ops);
    }
  }

  @Override
  void wakeup() {
    selector.wakeup();
  }

  @Override
  List<ProgressLoop.Registrant> registrants() {
    List<ProgressLoop.Registrant> out = new ArrayList<>();
    for (SelectionKey k : selector.keys()) {
      if (k.isValid()) {
        out.add((ProgressLoop.Registrant) k.attachment());
      }
    }
    return out;
  }

  @Override
  void close() {
    try {
      selector.close();
    } catch (IOException e) {
      LOG.log(Level.DEBUG, "closing the selector failed", e);
    }
  }

  /** A socket channel registered with the selector. */
  private static final class Socket extends StreamSocket {
    private final SocketChannel channel;
    private final SelectionKey key;

    Socket(SocketChannel channel, SelectionKey key) {
      this.channel = channel;
      this.key = key;
    }

    @Override
    boolean connect(String host, int port) throws IOException {
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      InetSocketAddress address = new InetSocketAddress(host, port);
      if (address.isUnresolved()) {
        throw new IOException("cannot resolve " + host); // as the native poller says it
      }
      return channel.connect(address);
    }

    @Override
    boolean finishConnect() throws IOException {
      return channel.finishConnect();
    }

    @Override
    int read(byte[] b, int off, int len) throws IOException {
      return channel.read(ByteBuffer.wrap(b, off, len));
    }

    @Override
    int write(byte[] b, int off, int len) throws IOException {
      return channel.write(ByteBuffer.wrap(b, off, len));
    }

    @Override
    void interest(int ops) {
      if (key.isValid()) {
        key.interestOps(ops);
      }
    }

    @Override
    int interest() {
      return key.isValid() ? key.interestOps() : 0;
    }

    @Override
    boolean isOpen() {
      return channel.isOpen();
    }

    @Override
    void close() throws IOException {
      channel.close();
    }

    @Override
    public String toString() {
      return channel.toString();
    }
  }
}
