package io.pmix.common.internal;

import static java.util.Objects.requireNonNull;

import java.util.ResourceBundle;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A {@link System.Logger} that finds the platform's logger only when something is first logged or
 * asked about. Why: {@link System#getLogger} initializes the logging backend (a service lookup and
 * java.util.logging's LogManager reading its configuration), ~10 ms of a fresh JVM, and the
 * connector's and the server's classes, whose static loggers used to trigger it, usually log
 * nothing in a whole run (docs/architecture.md, "Start-up of pmixrun"). Thread-safe.
 */
public final class LazyLogger implements System.Logger {
  /**
   * Levels below this one are dropped by a logger that has not found the platform's yet: none
   * ({@code ALL}) unless a launcher that configures logging itself says so ({@link
   * #assumeNothingBelow}). Process-wide, set once at start-up.
   */
  private static volatile Level floor = Level.ALL;

  private final String name;
  private volatile System.@Nullable Logger delegate;

  private LazyLogger(String name) {
    this.name = requireNonNull(name, "name");
  }

  /** A logger named after {@code owner}, as {@code System.getLogger(owner.getName())} is. */
  public static System.Logger of(Class<?> owner) {
    return new LazyLogger(owner.getName());
  }

  /** A logger named {@code name}, as {@code System.getLogger(name)} is. */
  public static System.Logger named(String name) {
    return new LazyLogger(name);
  }

  /**
   * Declares that nothing below {@code level} is logged in this process unless logging is
   * configured otherwise later, so that a logger asked about a lower level before anything was
   * logged answers without starting the logging backend. For a launcher that names its own
   * java.util.logging configuration (pmixrun: WARNING and above); not for a library.
   */
  public static void assumeNothingBelow(Level level) {
    floor = requireNonNull(level, "level");
  }

  private boolean dropped(Level level) {
    return delegate == null && level.getSeverity() < floor.getSeverity();
  }

  private System.Logger delegate() {
    System.Logger d = delegate;
    if (d == null) {
      d = System.getLogger(name);
      delegate = d;
    }
    return d;
  }

  @Override
  public String getName() {
    return name;
  }

  @Override
  public boolean isLoggable(Level level) {
    return !dropped(level) && delegate().isLoggable(level);
  }

  @Override
  public void log(Level level, @Nullable ResourceBundle bundle, String msg, @Nullable Throwable t) {
    if (dropped(level)) {
      return;
    }
    delegate().log(level, bundle, msg, t);
  }

  @Override
  public void log(Level level, @Nullable ResourceBundle bundle, String format, Object... params) {
    if (dropped(level)) {
      return;
    }
    delegate().log(level, bundle, format, params);
  }

  @Override
  public void log(Level level, Supplier<String> msgSupplier) {
    if (dropped(level)) {
      return;
    }
    delegate().log(level, msgSupplier);
  }
}
