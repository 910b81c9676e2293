package io.pmix.common.internal;

import static java.util.Objects.requireNonNull;

import java.util.ResourceBundle;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A {@link System.Logger} that finds the platform's logger only when something is first logged or
 * asked about. Why: {@link System#getLogger} initializes the logging backend (a service lookup and
 * java.util.logging's LogManager reading its configuration), ~10 ms of a fresh JVM, and the
 * connector's classes, whose static loggers used to trigger it, usually log nothing in a whole
 * run. Thread-safe.
 */
public final class LazyLogger implements System.Logger {
  private final String name;
  private volatile System.@Nullable Logger delegate;

  private LazyLogger(String name) {
    this.name = requireNonNull(name, "name");
  }

  /** A logger named after {@code owner}, as {@code System.getLogger(owner.getName())} is. */
  public static System.Logger of(Class<?> owner) {
    return new LazyLogger(owner.getName());
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
    return delegate().isLoggable(level);
  }

  @Override
  public void log(Level level, @Nullable ResourceBundle bundle, String msg, @Nullable Throwable t) {
    delegate().log(level, bundle, msg, t);
  }

  @Override
  public void log(Level level, @Nullable ResourceBundle bundle, String format, Object... params) {
    delegate().log(level, bundle, format, params);
  }

  @Override
  public void log(Level level, Supplier<String> msgSupplier) {
    delegate().log(level, msgSupplier);
  }
}
