package io.pmix.server.internal;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import io.pmix.common.internal.JnaStartup;
import io.pmix.common.internal.SockDiagCall;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * The owner of one TCP socket, asked of the Linux kernel through netlink {@code sock_diag}
 * ({@code SOCK_DIAG_BY_FAMILY} without {@code NLM_F_DUMP}): the request names the exact 4-tuple,
 * and the kernel looks that one socket up in its hash tables and answers with one {@code
 * inet_diag_msg} (or an error), whatever the number of sockets on the host. Reading {@code
 * /proc/net/tcp} instead costs time in proportion to every TCP socket of the host (issue #19:
 * a legitimate tool waited 80 s behind 10,000 hostile connections). Reached through pmix-java's
 * own native library ({@link SockDiagCall}), or JNA's libc binding where that does not load (JNA's
 * first call costs a fresh JVM ~60 ms, the library's ~1 ms); the structures are those of {@code linux/netlink.h}, {@code
 * linux/sock_diag.h} and {@code linux/inet_diag.h}, which are kernel ABI. Stateless and
 * thread-safe: each lookup opens, uses and closes its own netlink socket.
 */
final class SockDiag {
  private static final int AF_INET = 2;
  private static final int AF_INET6 = 10;
  private static final int AF_NETLINK = 16;
  private static final int SOCK_DGRAM = 2;
  private static final int SOCK_CLOEXEC = 0x80000;
  private static final int NETLINK_SOCK_DIAG = 4;
  private static final int SOL_SOCKET = 1;
  private static final int SO_RCVTIMEO = 20;
  private static final int IPPROTO_TCP = 6;
  private static final short SOCK_DIAG_BY_FAMILY = 20;
  private static final short NLM_F_REQUEST = 1;
  private static final short NLMSG_ERROR = 2;
  /** Every TCP state: the connecting end is ESTABLISHED, but may already be closing. */
  private static final int ALL_STATES = 0xffffffff;
  private static final int NLMSG_HDRLEN = 16;
  /** {@code struct inet_diag_req_v2}: family, protocol, ext, pad, states, the 48-byte sockid. */
  private static final int REQ_LENGTH = NLMSG_HDRLEN + 56;
  /** Where {@code idiag_uid} is in a reply: after the header, 4 bytes, the sockid, 3 words. */
  private static final int UID_OFFSET = NLMSG_HDRLEN + 4 + 48 + 12;

  /** One request/answer exchange with the kernel; throws {@link IllegalStateException}. */
  interface Exchange {
    /** Sends {@code request}, receives one answer into {@code reply}; its length. */
    int exchange(byte[] request, byte[] reply, Duration wait);
  }

  /** Through pmix-java's own native library ({@link SockDiagCall}). */
  static final Exchange JNI =
      new Exchange() {
        @Override
        public int exchange(byte[] request, byte[] reply, Duration wait) {
          int n = SockDiagCall.exchange(request, reply, micros(wait));
          if (n < 0) {
            throw new IllegalStateException("netlink sock_diag: errno " + -n);
          }
          return n;
        }
      };

  /** Through JNA's libc binding: where the native library does not load. */
  static final class Jna implements Exchange {
    /** The functions of libc used here; errors through errno ({@link LastErrorException}). */
    interface LibC extends Library {
      int socket(int domain, int type, int protocol) throws LastErrorException;

      int setsockopt(int fd, int level, int name, byte[] value, int length)
          throws LastErrorException;

      NativeLong send(int fd, byte[] buf, NativeLong length, int flags) throws LastErrorException;

      NativeLong recv(int fd, byte[] buf, NativeLong length, int flags) throws LastErrorException;

      int close(int fd) throws LastErrorException;
    }

    /** Loads libc once, when first needed. */
    private static final class Holder {
      static final LibC C;

      static {
        // Before any JNA class initializes: see there.
        JnaStartup.prepare();
        C = Native.load("c", LibC.class);
      }
    }

    /** Loads JNA's libc binding, or throws {@link LinkageError}. */
    Jna() {
      if (Holder.C == null) {
        throw new LinkageError("no libc through JNA");
      }
    }

    @Override
    public int exchange(byte[] request, byte[] reply, Duration wait) {
      LibC c = Holder.C;
      int fd;
      try {
        fd = c.socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
      } catch (LastErrorException e) {
        throw new IllegalStateException("netlink sock_diag socket: errno " + e.getErrorCode(), e);
      }
      try {
        int unused = c.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, timeval(wait), 16);
        long sent = c.send(fd, request, new NativeLong(request.length), 0).longValue();
        if (sent != request.length) {
          throw new IllegalStateException("netlink sock_diag took " + sent + " bytes");
        }
        return (int) c.recv(fd, reply, new NativeLong(reply.length), 0).longValue();
      } catch (LastErrorException e) {
        throw new IllegalStateException("netlink sock_diag: errno " + e.getErrorCode(), e);
      } finally {
        try {
          int unused = c.close(fd);
        } catch (LastErrorException e) {
          // Nothing left to do with it.
        }
      }
    }
  }

  /** The process's way to the kernel, chosen on first use: the native library, else JNA. */
  private static final class Chosen {
    static final @Nullable Exchange VIA = choose();

    private static @Nullable Exchange choose() {
      if (!System.getProperty("os.name", "").startsWith("Linux")) {
        return null;
      }
      if (SockDiagCall.available()) {
        return JNI;
      }
      try {
        return new Jna();
      } catch (LinkageError | RuntimeException e) {
        return null;
      }
    }
  }

  private SockDiag() {}

  /** Whether netlink sock_diag can be asked here (Linux, and a way to libc's calls). */
  static boolean available() {
    return Chosen.VIA != null;
  }

  /**
   * The uid owning the TCP socket whose local end is {@code local} and remote end is {@code
   * remote}, or empty if the kernel knows no such socket (gone already, or another network
   * namespace).
   *
   * @param wait how long the kernel's answer is waited for at most
   * @throws IllegalStateException if the kernel cannot be asked (no netlink, an unexpected answer)
   */
  static OptionalInt ownerUid(InetSocketAddress local, InetSocketAddress remote, Duration wait) {
    Exchange via = Chosen.VIA;
    if (via == null) {
      throw new IllegalStateException("netlink sock_diag is not reachable here");
    }
    return ownerUid(via, local, remote, wait);
  }

  /** {@link #ownerUidAtOnce}: the kernel knows no such socket. */
  static final long NO_SOCKET = -1;

  /** {@link #ownerUidAtOnce}: not asked that way here, or no answer was there at once. */
  static final long NOT_AT_ONCE = -2;

  /**
   * The uid (0 to 2^32-1) owning the socket {@code local} → {@code remote}, asked without waiting
   * for the kernel: through pmix-java's library only, whose receive does not block (the kernel
   * queues its answer to a request for one socket while it handles the send). {@link #NO_SOCKET}
   * if there is none; {@link #NOT_AT_ONCE} where the library is not the way here, the answer was
   * not there at once, or the exchange failed (the caller then asks {@link #ownerUid}, which
   * waits, off its thread).
   */
  static long ownerUidAtOnce(InetSocketAddress local, InetSocketAddress remote) {
    if (Chosen.VIA != JNI) {
      return NOT_AT_ONCE;
    }
    byte[] reply = new byte[8192];
    int n = SockDiagCall.exchange(request(local, remote), reply, 0);
    if (n < 0) {
      return NOT_AT_ONCE;
    }
    try {
      OptionalInt uid = parse(ByteBuffer.wrap(reply, 0, n).order(ByteOrder.nativeOrder()));
      return uid.isPresent() ? Integer.toUnsignedLong(uid.getAsInt()) : NO_SOCKET;
    } catch (IllegalStateException e) {
      return NOT_AT_ONCE;
    }
  }

  /** {@link #ownerUid(InetSocketAddress, InetSocketAddress, Duration)} through {@code via}. */
  static OptionalInt ownerUid(
      Exchange via, InetSocketAddress local, InetSocketAddress remote, Duration wait) {
    byte[] request = request(local, remote);
    byte[] reply = new byte[8192];
    int n = via.exchange(request, reply, wait);
    return parse(ByteBuffer.wrap(reply, 0, n).order(ByteOrder.nativeOrder()));
  }

  /** The request for the one socket {@code local} → {@code remote}. */
  static byte[] request(InetSocketAddress local, InetSocketAddress remote) {
    boolean six = local.getAddress() instanceof Inet6Address;
    if (six != (remote.getAddress() instanceof Inet6Address)
        || !(six || local.getAddress() instanceof Inet4Address)) {
      throw new IllegalArgumentException("mixed or unknown address families");
    }
    ByteBuffer b = ByteBuffer.allocate(REQ_LENGTH).order(ByteOrder.nativeOrder());
    b.putInt(REQ_LENGTH).putShort(SOCK_DIAG_BY_FAMILY).putShort(NLM_F_REQUEST);
    b.putInt(1).putInt(0); // sequence, port id (the kernel's)
    b.put((byte) (six ? AF_INET6 : AF_INET)).put((byte) IPPROTO_TCP).put((byte) 0).put((byte) 0);
    b.putInt(ALL_STATES);
    // struct inet_diag_sockid: ports and addresses in network order, then interface and cookie.
    b.order(ByteOrder.BIG_ENDIAN);
    b.putShort((short) local.getPort()).putShort((short) remote.getPort());
    putAddress(b, local);
    putAddress(b, remote);
    b.order(ByteOrder.nativeOrder());
    b.putInt(0).putInt(-1).putInt(-1); // any interface; INET_DIAG_NOCOOKIE
    return b.array();
  }

  private static void putAddress(ByteBuffer b, InetSocketAddress a) {
    byte[] ip = a.getAddress().getAddress();
    b.put(ip);
    b.put(new byte[16 - ip.length]);
  }

  /** The uid of an {@code inet_diag_msg} answer; empty for {@code ENOENT}. */
  static OptionalInt parse(ByteBuffer reply) {
    if (reply.remaining() < NLMSG_HDRLEN) {
      throw new IllegalStateException("netlink answer of " + reply.remaining() + " bytes");
    }
    int type = reply.getShort(4) & 0xffff;
    if (type == NLMSG_ERROR) {
      int errno = -reply.getInt(NLMSG_HDRLEN);
      if (errno == 2) { // ENOENT: no such socket
        return OptionalInt.empty();
      }
      throw new IllegalStateException("netlink sock_diag answered errno " + errno);
    }
    if (type != SOCK_DIAG_BY_FAMILY || reply.remaining() < UID_OFFSET + 4) {
      throw new IllegalStateException("netlink sock_diag answered type " + type);
    }
    return OptionalInt.of(reply.getInt(UID_OFFSET));
  }

  /** The wait in microseconds, at least 1 ms. */
  static long micros(Duration d) {
    return Math.max(1000, d.toNanos() / 1000);
  }

  /** A {@code struct timeval} of 64-bit seconds and microseconds (LP64 Linux). */
  private static byte[] timeval(Duration d) {
    long micros = micros(d);
    return ByteBuffer.allocate(16)
        .order(ByteOrder.nativeOrder())
        .putLong(micros / 1_000_000)
        .putLong(micros % 1_000_000)
        .array();
  }
}
