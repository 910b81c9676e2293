package io.pmix.dataserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DataStoreOptionsTest {
  @Test
  void defaultsAreTheSpecs() {
    DataStoreOptions o = DataStoreOptions.defaults();
    assertEquals(300, o.idleTimeout().toSeconds());
    assertEquals(16_777_216L, o.maxBytesPerUid());
    assertEquals("prte_data_server_timeout", DataStoreOptions.TIMEOUT_PARAMETER);
    assertEquals("prte_data_server_max_size", DataStoreOptions.MAX_SIZE_PARAMETER);
  }

  @Test
  void theEnvironmentOverridesOnlyWhatItSets() {
    DataStoreOptions o =
        DataStoreOptions.fromEnvironment(Map.of("PMIX_MCA_prte_data_server_max_size", " 4096 "));
    assertEquals(4096, o.maxBytesPerUid());
    assertEquals(300, o.idleTimeout().toSeconds());
    assertEquals(
        Duration.ZERO,
        DataStoreOptions.fromEnvironment(Map.of("PMIX_MCA_prte_data_server_timeout", "0"))
            .idleTimeout());
  }

  @Test
  void aMalformedParameterIsNamed() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                DataStoreOptions.fromEnvironment(
                    Map.of("PMIX_MCA_prte_data_server_timeout", "five")));
    assertTrue(e.getMessage().contains("PMIX_MCA_prte_data_server_timeout"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> DataStoreOptions.fromEnvironment(Map.of("PMIX_MCA_prte_data_server_max_size", "-1")));
  }

  @Test
  void builderRejectsNonsense() {
    assertThrows(
        IllegalArgumentException.class,
        () -> DataStoreOptions.builder().idleTimeout(Duration.ofSeconds(-1)));
    assertThrows(IllegalArgumentException.class, () -> DataStoreOptions.builder().maxBytesPerUid(-1));
    assertThrows(IllegalArgumentException.class, () -> DataStoreOptions.builder().maxPendingLookups(0));
  }

  @Test
  void toBuilderKeepsEverything() {
    DataStoreOptions o =
        DataStoreOptions.builder().idleTimeout(Duration.ofSeconds(5)).maxBytesPerUid(7).build();
    DataStoreOptions copy = o.toBuilder().build();
    assertEquals(o.idleTimeout(), copy.idleTimeout());
    assertEquals(o.maxBytesPerUid(), copy.maxBytesPerUid());
  }
}
