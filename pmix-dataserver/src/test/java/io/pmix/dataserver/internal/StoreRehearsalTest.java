package io.pmix.dataserver.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.dataserver.DataStoreOptions;
import io.pmix.dataserver.Identity;
import io.pmix.dataserver.LocalDataService;
import io.pmix.dataserver.LookupResult;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The store rehearsal a {@link LocalDataService} runs at its start must keep following the
 * store's rules (a failing step would silently warm nothing) and must leave the service's own
 * store untouched.
 */
class StoreRehearsalTest {
  @Test
  void storesFindsAndRemovesItsKeyWithTheDefaultOptions() {
    assertTrue(StoreRehearsal.run(DataStoreOptions.defaults()));
  }

  @Test
  void aNewServiceHoldsNothingButWhatItsClientsPublish() throws Exception {
    LocalDataService s = LocalDataService.create();
    try {
      int items =
          s.inspect(store -> store.itemCount()).toCompletableFuture().get(1, TimeUnit.MINUTES);
      assertEquals(0, items);
      // Even the rehearsal's own key is a key like any other for a client.
      Identity who = Identity.of(Proc.of("job", 0), 1000, 1000);
      String key = StoreRehearsal.NSPACE + ".key";
      assertTrue(
          s.publish(who, List.of(Info.of(key, Value.of("mine"))))
              .toCompletableFuture()
              .get(1, TimeUnit.MINUTES)
              .isSuccess());
      LookupResult r =
          s.lookup(who, List.of(key), List.of()).toCompletableFuture().get(1, TimeUnit.MINUTES);
      assertTrue(r.found());
      assertEquals(List.of(new Value.PData(who.proc(), key, Value.of("mine"))), r.data());
    } finally {
      s.close();
    }
  }
}
