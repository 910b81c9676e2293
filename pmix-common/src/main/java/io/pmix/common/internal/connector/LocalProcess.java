package io.pmix.common.internal.connector;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.internal.PmixNativeLibrary;
import java.io.FileInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Facts about this process a connector announces: its effective ids (for the native credential
 * and the identity block), its host name as PMIx uses it, and the security module it can offer.
 * Nothing is cached: every init asks again, so a changed environment is honoured.
 */
public final class LocalProcess {

  private LocalProcess() {}

  /** The word at {@code index} (from 0) of a line of whitespace-separated words. */
  static String word(String line, int index) {
    int i = 0;
    int n = line.length();
    for (int w = 0; ; w++) {
      while (i < n && Character.isWhitespace(line.charAt(i))) {
        i++;
      }
      int start = i;
      while (i < n && !Character.isWhitespace(line.charAt(i))) {
        i++;
      }
      if (start == i) {
        throw new IndexOutOfBoundsException("no word " + index + " in: " + line);
      }
      if (w == index) {
        return line.substring(start, i);
      }
    }
  }

  /**
   * The effective uid and gid: {@code geteuid} and {@code getegid} through pmix-java's native
   * library once it is loaded (at every init but a process's first), else from Linux's
   * /proc/self/status (second field of the Uid/Gid lines); elsewhere the JDK's UnixSystem gives
   * the real ids, which differ only in setuid programs. Opening, reading and splitting that file
   * was ~0.3 ms of every re-init's caller (issue 15); the two calls are a few microseconds.
   *
   * @return {uid, gid}, unsigned bits in ints
   */
  public static int[] effectiveIds() {
    if (PmixNativeLibrary.loaded()) {
      long ids = effectiveIds0();
      return new int[] {(int) (ids >>> 32), (int) ids};
    }
    return effectiveIdsFromProc();
  }

  /** {@code geteuid()} in the high 32 bits, {@code getegid()} in the low ones. */
  private static native long effectiveIds0();

  /** The effective ids as /proc/self/status (or, elsewhere, the JDK) gives them. */
  static int[] effectiveIdsFromProc() {
    int[] ids = {-1, -1};
    try {
      for (String line : procFile("/proc/self/status").split("\n", -1)) {
        if (line.startsWith("Uid:")) {
          ids[0] = Integer.parseUnsignedInt(word(line, 2));
        } else if (line.startsWith("Gid:")) {
          ids[1] = Integer.parseUnsignedInt(word(line, 2));
        }
      }
    } catch (IOException | RuntimeException e) {
      // Not Linux: fall through to the JDK.
    }
    if (ids[0] == -1 || ids[1] == -1) {
      com.sun.security.auth.module.UnixSystem u = new com.sun.security.auth.module.UnixSystem();
      ids[0] = (int) u.getUid();
      ids[1] = (int) u.getGid();
    }
    return ids;
  }

  /**
   * This process's id. On Linux the name of /proc/self's link: {@code ProcessHandle} would
   * initialize the JDK's process-handle support (its reaper's thread pool and native part), 9-12
   * ms of a fresh JVM on the test machine against 0.3 ms (docs/architecture.md, start-up of the
   * client).
   */
  public static long pid() {
    try {
      return Long.parseLong(Files.readSymbolicLink(Path.of("/proc/self")).toString());
    } catch (IOException | RuntimeException e) {
      return ProcessHandle.current().pid();
    }
  }

  /**
   * The executable this process runs (the java launcher), as {@code ProcessHandle.Info.command}
   * gives it; on Linux read from /proc/self/exe, for the same reason as {@link #pid}. Empty when
   * it cannot be told.
   */
  public static Optional<String> executable() {
    try {
      return Optional.of(Files.readSymbolicLink(Path.of("/proc/self/exe")).toString());
    } catch (IOException | RuntimeException e) {
      return ProcessHandle.current().info().command();
    }
  }

  /** The host name without a domain part, as C uses it when PMIX_HOSTNAME is not set. */
  public static String localHostname() {
    String h = kernelHostname();
    if (h == null) {
      try {
        h = InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        return "localhost";
      }
    }
    int dot = h.indexOf('.');
    return dot > 0 && !Character.isDigit(h.charAt(0)) ? h.substring(0, dot) : h;
  }

  /**
   * What gethostname(2) returns, as C reads it, from Linux's /proc; null elsewhere. The JDK's
   * InetAddress.getLocalHost() also resolves the name's address, a name-service lookup (DNS on
   * some sites) that the client does not need.
   */
  private static @Nullable String kernelHostname() {
    try {
      String h = procFile("/proc/sys/kernel/hostname").trim();
      return h.isEmpty() ? null : h;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * A small file's text, through java.io: {@code Files.readString} would load and initialize ~30
   * classes of the JDK's file channels, 4-7 ms of a fresh JVM's first init on the test machine
   * against under 1 ms (docs/architecture.md, start-up of the client).
   */
  private static String procFile(String path) throws IOException {
    try (FileInputStream in = new FileInputStream(path)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /**
   * The security module to offer, from a {@code PMIX_SECURITY_MODE} list. C picks the
   * highest-priority module the list names, whatever the order (munge 80, native 10, none 0);
   * without munge support the best we can offer is native, then none. An unset variable means the
   * library default, native.
   *
   * @throws PmixException with {@code ERR_NOT_SUPPORTED} if the list names neither native nor none
   */
  public static String chooseSecurity(@Nullable String mode) {
    if (mode == null || mode.isBlank()) {
      return "native";
    }
    boolean none = false;
    for (String m : mode.split(",")) {
      String name = m.trim().toLowerCase(Locale.ROOT);
      if (name.equals("native")) {
        return "native";
      }
      none |= name.equals("none");
    }
    if (none) {
      return "none";
    }
    throw new PmixException(
        Status.ERR_NOT_SUPPORTED,
        "PMIX_SECURITY_MODE=" + mode + " names no security module this library has (native, none)");
  }
}
