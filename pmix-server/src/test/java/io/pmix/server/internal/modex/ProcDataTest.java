package io.pmix.server.internal.modex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Value;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A process's store keeps PMIx 5+ qualified values apart by their qualifiers (issue #16). */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ProcDataTest {
  private static final String KEY = "pmix.grp.lclid";
  private static final String QUAL = Keys.QUALIFIED_VALUE.name();

  private static Value qualified(long value, long qualifier) {
    return DataArray.ofInfos(
        List.of(
            Info.of(KEY, new Value.UInt(DataType.SIZE, value)),
            Info.of("OURQUALIFIER", new Value.UInt(DataType.SIZE, qualifier))
                .withFlags(Info.QUALIFIER)));
  }

  @Test
  void twoQualifiedValuesOfOneKeyBothStayBesideThePlainValue() {
    ProcData d = new ProcData();
    d.putRemote(QUAL, qualified(100, 123456));
    d.putRemote(QUAL, qualified(101, 891011));
    d.putRemote(KEY, new Value.UInt(DataType.SIZE, 102));
    Map<String, Value> r = d.remote();
    assertEquals(3, r.size(), r::toString);
    assertEquals(
        List.of(QUAL, QUAL, KEY), r.keySet().stream().map(ProcData::wireKey).toList());
    assertEquals(List.of(qualified(100, 123456), qualified(101, 891011),
        new Value.UInt(DataType.SIZE, 102)), List.copyOf(r.values()));
  }

  @Test
  void theSameQualifiersReplace() {
    ProcData d = new ProcData();
    d.putLocal(QUAL, qualified(100, 123456));
    d.putLocal(QUAL, qualified(7, 123456));
    assertEquals(List.of(qualified(7, 123456)), List.copyOf(d.local().values()));
  }

  @Test
  void aQualifiedValueIsFoundByItsPrimaryKeyOnly() {
    ProcData d = new ProcData();
    d.putLocal(QUAL, qualified(100, 123456));
    assertTrue(ProcData.holds(d.local(), KEY));
    assertFalse(ProcData.holds(d.local(), "pmix.grp"));
    assertFalse(ProcData.holds(d.local(), "pmix.grp.lclid.other"));
    assertFalse(ProcData.holds(d.remote(), KEY));
  }
}
