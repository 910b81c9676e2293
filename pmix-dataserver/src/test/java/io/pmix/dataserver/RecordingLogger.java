package io.pmix.dataserver;

import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;

/** A System.Logger that keeps every message at or above INFO, formatted, for assertions. */
final class RecordingLogger implements System.Logger {
  record Entry(Level level, String message) {}

  final List<Entry> entries = new ArrayList<>();

  @Override
  public String getName() {
    return "test";
  }

  @Override
  public boolean isLoggable(Level level) {
    return true;
  }

  @Override
  public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
    record(level, msg);
  }

  @Override
  public void log(Level level, ResourceBundle bundle, String format, Object... params) {
    record(level, params == null || params.length == 0 ? format : MessageFormat.format(format, params));
  }

  private void record(Level level, String message) {
    if (level.getSeverity() >= Level.INFO.getSeverity()) {
      entries.add(new Entry(level, message));
    }
  }

  List<Entry> at(Level level) {
    return entries.stream().filter(e -> e.level() == level).toList();
  }
}
