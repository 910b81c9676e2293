package io.pmix.server.internal;

import io.pmix.common.internal.LazyLogger;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;

/**
 * Finds the uid that owns the connecting end of a loopback TCP connection. A C server trusts the
 * uid a client writes in its credential (docs/transport.md §8.2); this lets the Java server check
 * it. On Linux the kernel is asked for that one socket through netlink sock_diag ({@link
 * SockDiag}: microseconds, whatever the number of sockets); where that is not available, the
 * kernel's socket tables ({@code /proc/net/tcp} and {@code /proc/net/tcp6}) are scanned for the
 * address pair, which costs time in proportion to every TCP socket of the host. {@link #ownerUid}
 * makes blocking system calls or file reads either way, so call it off the progress thread;
 * {@link #ownerUidAtOnce} makes none and answers only where it can without them. Thread-safe.
 */
public final class SocketOwner {
  private static final System.Logger LOG = LazyLogger.of(SocketOwner.class);
  /** How long the kernel's netlink answer is waited for (it answers at once). */
  private static final Duration SOCK_DIAG_WAIT = Duration.ofSeconds(1);

  private final Path procNet;
  private final boolean sockDiag;

  /**
   * Loads what a lookup needs (the native binding of netlink sock_diag) and makes one lookup of a
   * socket that does not exist, ahead of the first real one: a fresh JVM's first native call
   * through the binding takes milliseconds, which a connecting client would wait. Blocking; call
   * it on the lookup thread.
   */
  public static void prepare() {
    if (SockDiag.available()) {
      InetSocketAddress none = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
      try {
        OptionalInt unused = SockDiag.ownerUid(none, none, SOCK_DIAG_WAIT);
      } catch (IllegalStateException | IllegalArgumentException e) {
        LOG.log(Level.DEBUG, "the rehearsed sock_diag lookup failed: {0}", e.getMessage());
      }
    }
  }

  /** Netlink sock_diag where available, else the tables under {@code /proc/net}. */
  SocketOwner() {
    this(Paths.get("/proc/net"), SockDiag.available());
  }

  /** Only the tables under {@code procNet} are scanned. */
  SocketOwner(Path procNet) {
    this(procNet, false);
  }

  private SocketOwner(Path procNet, boolean sockDiag) {
    this.procNet = procNet;
    this.sockDiag = sockDiag;
  }

  /**
   * The uid owning the socket whose local address is {@code peer} and remote address is {@code
   * server}, or empty if the kernel knows none (gone already, another network namespace, no
   * procfs).
   */
  OptionalInt ownerUid(InetSocketAddress peer, InetSocketAddress server) {
    if (sockDiag) {
      try {
        return SockDiag.ownerUid(peer, server, SOCK_DIAG_WAIT);
      } catch (IllegalStateException | IllegalArgumentException e) {
        LOG.log(Level.DEBUG, "netlink sock_diag failed ({0}); scanning /proc/net", e.getMessage());
      }
    }
    return scanTables(peer, server);
  }

  /**
   * Completes {@code into} with the owner when the kernel answers at once ({@link
   * SockDiag#ownerUidAtOnce}: sock_diag through pmix-java's library, which makes no blocking call,
   * so the progress thread may ask); false, {@code into} untouched, where that is not how the
   * kernel is asked here or no answer was there at once.
   */
  boolean ownerUidAtOnce(
      InetSocketAddress peer, InetSocketAddress server, CompletableFuture<OptionalInt> into) {
    if (!sockDiag) {
      return false;
    }
    long uid;
    try {
      uid = SockDiag.ownerUidAtOnce(peer, server);
    } catch (IllegalArgumentException e) {
      return false;
    }
    if (uid == SockDiag.NOT_AT_ONCE) {
      return false;
    }
    return into.complete(
        uid == SockDiag.NO_SOCKET ? OptionalInt.empty() : OptionalInt.of((int) uid));
  }

  /** The owner as the tables under {@link #procNet} list it. */
  OptionalInt scanTables(InetSocketAddress peer, InetSocketAddress server) {
    for (String table : new String[] {"tcp", "tcp6"}) {
      boolean six = table.equals("tcp6");
      String local = encode(peer, six);
      String remote = encode(server, six);
      if (local == null || remote == null) {
        continue;
      }
      List<String> lines;
      try {
        lines = Files.readAllLines(procNet.resolve(table), StandardCharsets.US_ASCII);
      } catch (IOException e) {
        continue;
      }
      for (String line : lines) {
        String[] f =
            com.google.common.base.Splitter.onPattern("\\s+")
                .omitEmptyStrings()
                .splitToList(line.trim())
                .toArray(new String[0]);
        if (f.length > 7 && f[1].equalsIgnoreCase(local) && f[2].equalsIgnoreCase(remote)) {
          try {
            return OptionalInt.of((int) Long.parseLong(f[7]));
          } catch (NumberFormatException e) {
            return OptionalInt.empty();
          }
        }
      }
    }
    return OptionalInt.empty();
  }

  /** The kernel's text for an address and port in the given table (null if it cannot appear). */
  static String encode(InetSocketAddress a, boolean six) {
    InetAddress ip = a.getAddress();
    byte[] b;
    if (ip instanceof Inet4Address) {
      if (!six) {
        return words(ip.getAddress()) + ":" + port(a.getPort());
      }
      b = new byte[16];
      b[10] = (byte) 0xff;
      b[11] = (byte) 0xff;
      System.arraycopy(ip.getAddress(), 0, b, 12, 4);
    } else if (ip instanceof Inet6Address) {
      if (!six) {
        return null;
      }
      b = ip.getAddress();
    } else {
      return null;
    }
    return words(b) + ":" + port(a.getPort());
  }

  /** Each 32-bit word printed as the host-order integer it is in memory. */
  private static String words(byte[] b) {
    StringBuilder sb = new StringBuilder();
    boolean little = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    for (int w = 0; w < b.length; w += 4) {
      for (int i = 0; i < 4; i++) {
        int idx = little ? w + 3 - i : w + i;
        sb.append(String.format(Locale.ROOT, "%02X", b[idx] & 0xff));
      }
    }
    return sb.toString();
  }

  private static String port(int p) {
    return String.format(Locale.ROOT, "%04X", p);
  }
}
