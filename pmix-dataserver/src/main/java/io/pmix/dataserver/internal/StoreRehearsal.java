package io.pmix.dataserver.internal;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.dataserver.DataStore;
import io.pmix.dataserver.DataStoreOptions;
import io.pmix.dataserver.Identity;
import io.pmix.dataserver.LookupResult;
import java.lang.System.Logger;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Publishes, looks up and unpublishes one key in a store of its own, once, when a service starts:
 * the store's code then runs for the first time before the first client's request rather than
 * inside it (a fresh pmixrun's first publish took ~9 ms in the store against well under 1 ms for
 * the next ones, docs/architecture.md "Start-up of pmixrun"). The rehearsal's store is thrown
 * away: the service's own store never sees it.
 */
public final class StoreRehearsal {
  /** The namespace of the rehearsal's process; no server registers it. */
  static final String NSPACE = "pmix-java.rehearsal";

  private StoreRehearsal() {}

  /**
   * Rehearses once in a new store with {@code options} (its log silenced). Never throws.
   *
   * @return whether the key was stored, found and removed, leaving the store empty (a test's
   *     check that the rehearsal still follows the store's rules)
   */
  public static boolean run(DataStoreOptions options) {
    try {
      DataStore store = new DataStore(options.toBuilder().logger(Silent.INSTANCE).build());
      Identity who = Identity.of(Proc.of(NSPACE, 0), 0, 0);
      String key = NSPACE + ".key";
      if (!store.publish(who, List.of(Info.of(key, Value.of("value")))).isSuccess()) {
        return false;
      }
      AtomicReference<@Nullable LookupResult> found = new AtomicReference<>();
      store.lookup(who, List.of(key), List.of(), found::set);
      LookupResult r = found.get();
      Status removed = store.unpublish(who, List.of(key), List.of());
      return r != null && r.found() && removed.isSuccess() && store.itemCount() == 0;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** A logger that logs nothing: the rehearsal's store is not the service's. */
  private enum Silent implements Logger {
    INSTANCE;

    @Override
    public String getName() {
      return StoreRehearsal.class.getName();
    }

    @Override
    public boolean isLoggable(Level level) {
      return false;
    }

    @Override
    public void log(Level level, @Nullable ResourceBundle bundle, String msg, @Nullable Throwable thrown) {}

    @Override
    public void log(
        Level level, @Nullable ResourceBundle bundle, String format, @Nullable Object... params) {}

    @Override
    public void log(Level level, Supplier<String> msgSupplier) {}
  }
}
