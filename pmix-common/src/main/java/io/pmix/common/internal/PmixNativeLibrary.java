package io.pmix.common.internal;

import io.pmix.common.internal.connector.LocalProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * pmix-java's own native library, {@code libpmixjava.so} (pmix-common's {@code src/main/c}):
 * loaded once per process, when first needed, with {@link System#load}.
 *
 * <p>The build puts it at {@code META-INF/native/linux-<os.arch>/} of pmix-common's classes. Run
 * from a class directory, it is loaded from there; from a jar (pmix-common's own or an
 * application's merged one), from a verified copy in the user's cache ({@link NativeCache}, {@code
 * pmix-java/native/}). When it cannot be loaded (another operating system or architecture than
 * the build's, no writable cache, a {@code noexec} one), {@link #load} says so and callers take
 * their fallback; {@link #failure} tells why.
 *
 * <p>A loaded library stays loaded for the JVM's life (the JVM cannot unload it while this class
 * lives), as JNA's would: a property of the JVM, not state of a library role, so it is not among
 * what {@code LibraryHolder.processWideState} lists and a finalize leaves it loaded. Thread-safe.
 */
public final class PmixNativeLibrary {
  /** The library's file name. */
  static final String FILE = "libpmixjava.so";

  private static boolean tried;
  private static boolean loaded;
  private static @Nullable String failure;

  private PmixNativeLibrary() {}

  /** The library's path inside pmix-common's classes for this JVM's architecture. */
  static String entry() {
    return "META-INF/native/linux-" + System.getProperty("os.arch", "unknown") + "/" + FILE;
  }

  /**
   * Loads the library the first time it is called; then answers the same.
   *
   * @return whether the library is loaded in this process
   */
  public static synchronized boolean load() {
    if (!tried) {
      tried = true;
      try {
        Path file = locate();
        if (file != null) {
          System.load(file.toString());
          loaded = true;
        }
      } catch (RuntimeException | LinkageError e) {
        failure = FILE + " did not load: " + e;
      }
    }
    return loaded;
  }

  /** Whether the library is loaded already; never loads it. */
  public static synchronized boolean loaded() {
    return loaded;
  }

  /** Why {@link #load} answered false, or null when it did not (or was not called yet). */
  public static synchronized @Nullable String failure() {
    return loaded ? null : failure;
  }

  /** The file to load, or null with {@link #failure} set. */
  private static @Nullable Path locate() {
    if (!"Linux".equals(System.getProperty("os.name"))) {
      failure = FILE + " is built for Linux only";
      return null;
    }
    Path source = NativeCache.codeSourceOf(PmixNativeLibrary.class);
    if (source == null) {
      failure = "pmix-common's classes come from no local file";
      return null;
    }
    String entry = entry();
    if (Files.isDirectory(source)) {
      Path file = source.resolve(entry);
      if (Files.isRegularFile(file)) {
        return file;
      }
      failure = file + " does not exist";
      return null;
    }
    Path root = NativeCache.cacheRoot(System.getenv());
    Path dir =
        root == null
            ? null
            : NativeCache.cachedCopy(
                root, "native", source, entry, FILE, LocalProcess.effectiveIds()[0]);
    if (dir == null) {
      failure =
          "no usable copy of " + entry + " from " + source + " under " + root + "/pmix-java/native";
      return null;
    }
    return dir.resolve(FILE);
  }
}
