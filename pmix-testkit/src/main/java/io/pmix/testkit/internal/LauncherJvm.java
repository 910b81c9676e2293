package io.pmix.testkit.internal;

import static java.nio.charset.StandardCharsets.ISO_8859_1;

import io.netty.util.internal.PlatformDependent;
import io.netty.util.internal.logging.AbstractInternalLogger;
import io.netty.util.internal.logging.FormattingTuple;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import io.netty.util.internal.logging.MessageFormatter;
import io.pmix.common.internal.LazyLogger;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.logging.LogManager;
import org.jspecify.annotations.Nullable;

/**
 * What {@code pmixrun} sets in its own JVM before anything else runs, so that a job that logs
 * nothing starts no logging and scans no class path.
 *
 * <p>Why: the first look for a service provider across the class path (java.util.logging's
 * start-up looks for a {@code System.LoggerFinder}; Netty's logger factory probes for SLF4J and
 * Log4j; the JDK's selector looks for a {@code SelectorProvider}) opens every jar of it and reads
 * each one's directory. With pmixrun's class-data archive no jar needs opening otherwise, and on
 * the 2-core test machine that one scan of pmixrun's 29 jars took 25-30 ms of a job's fixed cost,
 * java.util.logging's start-up 13-18 ms more (docs/architecture.md, "Start-up of pmixrun").
 *
 * <ul>
 *   <li>Logging keeps pmixrun's rule (warnings and errors only, unless a configuration is given
 *       with {@code java.util.logging.config.file} or {@code .class}) but starts when something is
 *       first logged: {@link Configuration} is named as java.util.logging's configuration class,
 *       and the libraries' loggers find the platform's on first use ({@link LazyLogger}).
 *   <li>Netty's loggers: with a configuration given, java.util.logging's (what Netty's probe finds
 *       on pmixrun's class path anyway); without one, loggers that drop trace, debug and info and
 *       hand warnings and errors to a {@link LazyLogger}.
 *   <li>The JDK's selector provider is named ({@code java.nio.channels.spi.SelectorProvider}, the
 *       JDK's own epoll one, unless set), so its first lookup does not search the class path.
 *   <li>Netty's epoll library: Netty looks for it on {@code java.library.path} first, and
 *       otherwise searches every jar for it and unpacks it to a new temporary file (named through
 *       {@code SecureRandom}, whose first use starts the JDK's security providers). With the
 *       system property {@value #NATIVE_COPY} (set by {@code bin/lib/testkit.sh} for the run that
 *       trains pmixrun's class-data archive) the library is copied into the directory it names,
 *       which later runs put on {@code java.library.path}: 22 ms less of a job's fixed cost on the
 *       test machine.
 *   <li>Processes are started with {@code vfork} and the command's own {@code exec} ({@code
 *       jdk.lang.Process.launchMechanism=VFORK}, on JDK 17 to 24, unless set), where the JDK's
 *       default starts each through its {@code jspawnhelper} program, which then execs the command:
 *       one more program start per process. A 256-process job of the C benchmark client on the
 *       2-core test machine spent ~1.4 s of its CPU in those starts (`perf`); without them its wall
 *       went from 7.4 to 6.7 s (C's host server: 6.3 s) and at 1,024 processes from 48.5 to 44.2 s
 *       (docs/architecture.md, "Starting processes"). JDK 25 deprecates the mechanism (it warns at
 *       every start) and a later JDK removes it, so there the JDK's default stays.
 *   <li>Netty's leak detection is off ({@code io.netty.leakDetection.level=disabled}, unless
 *       set): by default it tracks one buffer allocation in 128 at random, and the first tracked
 *       one in a JVM loads the detector's classes from the jars, which pmixrun's class-data
 *       archive holds only when its training run happened to track one: in half the jobs of a
 *       profile, 12 ms of the progress thread opening the class path (docs/architecture.md,
 *       "Netty's leak detection in pmixrun"). The test suites run the server with the detector
 *       at its most thorough level.
 * </ul>
 */
public final class LauncherJvm {
  private static final String CONFIG_FILE = "java.util.logging.config.file";
  private static final String CONFIG_CLASS = "java.util.logging.config.class";
  private static final String SELECTOR_PROVIDER = "java.nio.channels.spi.SelectorProvider";
  private static final String EPOLL_PROVIDER = "sun.nio.ch.EPollSelectorProvider";
  /** Names the directory to copy Netty's epoll library into (the archive's training run). */
  public static final String NATIVE_COPY = "io.pmix.pmixrun.nativeCopy";
  /** The JDK's choice of how {@code ProcessBuilder.start} makes a process. */
  static final String LAUNCH_MECHANISM = "jdk.lang.Process.launchMechanism";
  /** Netty's leak detection level, and the name it had before Netty 4.1. */
  static final String LEAK_DETECTION = "io.netty.leakDetection.level";

  private static final String LEAK_DETECTION_OLD = "io.netty.leakDetectionLevel";

  /** The first JDK that warns at every process start made with {@code VFORK}. */
  private static final int VFORK_DEPRECATED_IN = 25;

  private LauncherJvm() {}

  /**
   * Makes the settings above; call first thing in the launcher's {@code main}, before any Netty
   * class is used (Netty's classes take their loggers when they initialize) and before any
   * process is started (the JDK reads its launch mechanism once).
   */
  public static void prepare() {
    boolean configured =
        System.getProperty(CONFIG_FILE) != null || System.getProperty(CONFIG_CLASS) != null;
    if (configured) {
      InternalLoggerFactory.setDefaultFactory(JdkLoggerFactory.INSTANCE);
    } else {
      System.setProperty(CONFIG_CLASS, Configuration.class.getName());
      LazyLogger.assumeNothingBelow(Level.WARNING);
      InternalLoggerFactory.setDefaultFactory(new QuietNettyLoggers());
    }
    if (System.getProperty(SELECTOR_PROVIDER) == null && jdkHasEpollProvider()) {
      System.setProperty(SELECTOR_PROVIDER, EPOLL_PROVIDER);
    }
    if (System.getProperty(LAUNCH_MECHANISM) == null
        && Runtime.version().feature() < VFORK_DEPRECATED_IN
        && "Linux".equals(System.getProperty("os.name"))) {
      System.setProperty(LAUNCH_MECHANISM, "VFORK");
    }
    if (System.getProperty(LEAK_DETECTION) == null
        && System.getProperty(LEAK_DETECTION_OLD) == null) {
      System.setProperty(LEAK_DETECTION, "disabled");
    }
    String copyTo = System.getProperty(NATIVE_COPY);
    if (copyTo != null) {
      copyNettyEpollLibrary(Path.of(copyTo));
    }
  }

  /**
   * Copies Netty's epoll library for this architecture from its jar into {@code dir} (made if
   * missing) under the name {@code System.loadLibrary} looks for, replacing the file whole; does
   * nothing when the jar has none. A failure leaves no partial file and is not an error: Netty then
   * unpacks the library itself, as it always did.
   */
  static void copyNettyEpollLibrary(Path dir) {
    String name =
        System.mapLibraryName("netty_transport_native_epoll_" + PlatformDependent.normalizedArch());
    Path tmp = dir.resolve(name + ".tmp" + ProcessHandle.current().pid());
    try (InputStream in = LauncherJvm.class.getResourceAsStream("/META-INF/native/" + name)) {
      if (in == null) {
        return;
      }
      Files.createDirectories(dir);
      Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
      Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException | RuntimeException e) {
      try {
        Files.deleteIfExists(tmp);
      } catch (IOException ignored) {
        // nothing more to do: a stray temporary file is not loaded by name
      }
    }
  }

  private static boolean jdkHasEpollProvider() {
    try {
      Class.forName(EPOLL_PROVIDER, false, null);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false; // another JDK or OS: the JDK looks its provider up as usual
    }
  }

  /**
   * pmixrun's java.util.logging configuration, read when logging starts: the JDK's default (one
   * console handler, the simple formatter) with the root level at WARNING, so that the
   * libraries' INFO (a client that dies without finalizing, say) stays out of the job's output.
   * Named by {@link #prepare} as {@code java.util.logging.config.class}; not for other use.
   */
  public static final class Configuration {
    private static final String PROPERTIES =
        "handlers=java.util.logging.ConsoleHandler\n"
            + ".level=WARNING\n"
            + "java.util.logging.ConsoleHandler.level=INFO\n"
            + "java.util.logging.ConsoleHandler.formatter=java.util.logging.SimpleFormatter\n";

    /**
     * Reads the configuration into the LogManager, as java.util.logging asks of a configuration
     * class's constructor.
     */
    public Configuration() {
      try {
        LogManager.getLogManager()
            .readConfiguration(new ByteArrayInputStream(PROPERTIES.getBytes(ISO_8859_1)));
      } catch (IOException e) {
        throw new UncheckedIOException(e); // from a byte array: cannot happen
      }
    }
  }

  /** Netty's loggers for a launcher that shows warnings and errors only. */
  private static final class QuietNettyLoggers extends InternalLoggerFactory {
    @Override
    protected InternalLogger newInstance(String name) {
      return new QuietNettyLogger(name);
    }
  }

  /** Drops trace, debug and info; formats warnings and errors as Netty does and logs them. */
  private static final class QuietNettyLogger extends AbstractInternalLogger {
    private static final long serialVersionUID = 1L;
    private final transient System.Logger sink;

    QuietNettyLogger(String name) {
      super(name);
      this.sink = LazyLogger.named(name);
    }

    private void emit(Level level, FormattingTuple t) {
      emit(level, t.getMessage(), t.getThrowable());
    }

    private void emit(Level level, @Nullable String msg, @Nullable Throwable t) {
      if (t == null) {
        sink.log(level, msg);
      } else {
        sink.log(level, msg, t);
      }
    }

    @Override
    public boolean isTraceEnabled() {
      return false;
    }

    @Override
    public void trace(String msg) {}

    @Override
    public void trace(String format, Object arg) {}

    @Override
    public void trace(String format, Object argA, Object argB) {}

    @Override
    public void trace(String format, Object... arguments) {}

    @Override
    public void trace(String msg, Throwable t) {}

    @Override
    public boolean isDebugEnabled() {
      return false;
    }

    @Override
    public void debug(String msg) {}

    @Override
    public void debug(String format, Object arg) {}

    @Override
    public void debug(String format, Object argA, Object argB) {}

    @Override
    public void debug(String format, Object... arguments) {}

    @Override
    public void debug(String msg, Throwable t) {}

    @Override
    public boolean isInfoEnabled() {
      return false;
    }

    @Override
    public void info(String msg) {}

    @Override
    public void info(String format, Object arg) {}

    @Override
    public void info(String format, Object argA, Object argB) {}

    @Override
    public void info(String format, Object... arguments) {}

    @Override
    public void info(String msg, Throwable t) {}

    @Override
    public boolean isWarnEnabled() {
      return true;
    }

    @Override
    public void warn(String msg) {
      emit(Level.WARNING, msg, null);
    }

    @Override
    public void warn(String format, Object arg) {
      emit(Level.WARNING, MessageFormatter.format(format, arg));
    }

    @Override
    public void warn(String format, Object argA, Object argB) {
      emit(Level.WARNING, MessageFormatter.format(format, argA, argB));
    }

    @Override
    public void warn(String format, Object... arguments) {
      emit(Level.WARNING, MessageFormatter.arrayFormat(format, arguments));
    }

    @Override
    public void warn(String msg, Throwable t) {
      emit(Level.WARNING, msg, t);
    }

    @Override
    public boolean isErrorEnabled() {
      return true;
    }

    @Override
    public void error(String msg) {
      emit(Level.ERROR, msg, null);
    }

    @Override
    public void error(String format, Object arg) {
      emit(Level.ERROR, MessageFormatter.format(format, arg));
    }

    @Override
    public void error(String format, Object argA, Object argB) {
      emit(Level.ERROR, MessageFormatter.format(format, argA, argB));
    }

    @Override
    public void error(String format, Object... arguments) {
      emit(Level.ERROR, MessageFormatter.arrayFormat(format, arguments));
    }

    @Override
    public void error(String msg, Throwable t) {
      emit(Level.ERROR, msg, t);
    }
  }
}
