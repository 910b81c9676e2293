package io.pmix.common.internal;

import io.pmix.common.internal.connector.LocalProcess;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * Makes JNA's first use in a process cheap; {@link #prepare} runs before any class of JNA is
 * initialized (the classes that call C through JNA call it in their static initializers).
 *
 * <p>A fresh JNA spends two avoidable costs in every process, measured on the 2-core test machine
 * as about a third of its ~120 ms first load (docs/architecture.md, "Start-up of the client"):
 *
 * <ul>
 *   <li><b>{@code /sbin/ldconfig -p} in a subprocess</b>, from {@code NativeLibrary}'s static
 *       initializer, only to list the directories of the linker's cache as fallback search paths
 *       ({@code jna.platform.library.path}). The libraries pmix-java loads (libc) are found by
 *       {@code dlopen} itself, which reads the same cache. This sets the property, when nobody
 *       has, to the directories ldconfig reads ({@code /etc/ld.so.conf} and the files it includes)
 *       and the system's default ones: what the subprocess would have listed, without it.
 *   <li><b>Unpacking its native part</b> ({@code libjnidispatch.so}) from its jar to a new
 *       temporary file at every start, named through {@code SecureRandom} (which initializes the
 *       JDK's security providers). This keeps one verified copy in the user's own cache ({@link
 *       NativeCache}, {@code pmix-java/jna/}) and points {@code jna.boot.library.path} at it,
 *       when nobody has set that property.
 * </ul>
 *
 * <p>Whatever fails here (no home directory, a read-only one, a directory someone else owns)
 * leaves JNA to its own defaults: the first load is slower, nothing else changes.
 */
public final class JnaStartup {
  private static final System.Logger LOG = LazyLogger.of(JnaStartup.class);

  /** JNA's property for its fallback library search path. */
  static final String PLATFORM_PATH = "jna.platform.library.path";

  /** JNA's property for where to look for its native part before unpacking it. */
  static final String BOOT_PATH = "jna.boot.library.path";

  private static boolean prepared;

  private JnaStartup() {}

  /**
   * Sets JNA's start-up properties as the class comment says, once per process; never overrides a
   * property the application set. Cheap after the first call.
   */
  public static synchronized void prepare() {
    if (prepared) {
      return;
    }
    prepared = true;
    String[] arch = architecture();
    if (!"Linux".equals(System.getProperty("os.name")) || arch == null) {
      return;
    }
    try {
      if (System.getProperty(PLATFORM_PATH) == null) {
        System.setProperty(
            PLATFORM_PATH, String.join(":", LinkerPaths.platformPath(Path.of("/"), arch[0])));
      }
      if (System.getProperty(BOOT_PATH) == null && System.getProperty("jna.nounpack") == null) {
        Path root = NativeCache.cacheRoot(System.getenv());
        // Loading the interface does not initialize JNA (that is what must come after prepare).
        Path jar = NativeCache.codeSourceOf(com.sun.jna.Library.class);
        if (root != null && jar != null && Files.isRegularFile(jar)) {
          Path dir =
              NativeCache.cachedCopy(
                  root,
                  "jna",
                  jar,
                  "com/sun/jna/" + arch[1] + "/libjnidispatch.so",
                  "libjnidispatch.so",
                  LocalProcess.effectiveIds()[0]);
          if (dir != null) {
            System.setProperty(BOOT_PATH, dir.toString());
          }
        }
      }
    } catch (RuntimeException e) {
      LOG.log(Level.DEBUG, "JNA start-up shortcuts not taken", e);
    }
  }

  /**
   * This JVM's architecture as {Debian's multiarch directory name, JNA's resource folder}, or
   * null for one this class does not know.
   */
  private static String @Nullable [] architecture() {
    String triplet = LinkerPaths.triplet();
    String folder =
        switch (triplet == null ? "" : triplet) {
          case "x86_64-linux-gnu" -> "linux-x86-64";
          case "aarch64-linux-gnu" -> "linux-aarch64";
          case "powerpc64le-linux-gnu" -> "linux-ppc64le";
          case "s390x-linux-gnu" -> "linux-s390x";
          case "riscv64-linux-gnu" -> "linux-riscv64";
          default -> null;
        };
    return folder == null ? null : new String[] {triplet, folder};
  }
}
