package io.pmix.dataserver.internal;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.pmix.common.DataArray;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Reads the info arrays of publish, lookup and unpublish: which entries are directives and what
 * they say, and, for a publish, which are the data. Every refusal is a {@link PmixException} whose
 * status the caller returns: a restriction that cannot be read must fail the request, never be
 * dropped (dropping {@code PMIX_ACCESS_PERMISSIONS} would store the data unrestricted).
 *
 * <p>In a publish, an entry whose key is a reserved PMIx attribute is a directive, never data:
 * those this store does not act on ({@code pmix.timeout}, the {@code pmix.euid} the server
 * appends, ...) are ignored, unless marked REQUIRED, which fails the request with {@code
 * PMIX_ERR_NOT_SUPPORTED} as PMIx requires. Every other key is published data.
 */
public final class Directives {
  /** PRRTE's directive: republish over the caller's own earlier publication of these keys. */
  public static final String REPLACE = "prte.pub.replace";

  private static final String RANGE = Keys.RANGE.name();
  private static final String PERSISTENCE = Keys.PERSISTENCE.name();
  private static final String ACCESS_PERMISSIONS = Keys.ACCESS_PERMISSIONS.name();
  private static final String ACCESS_USERIDS = Keys.ACCESS_USERIDS.name();
  private static final String ACCESS_GRPIDS = Keys.ACCESS_GRPIDS.name();
  private static final String WAIT = Keys.WAIT.name();
  private static final String TIMEOUT = Keys.TIMEOUT.name();

  private Directives() {}

  /**
   * A parsed publish.
   *
   * @param data the data, by key, in the order given
   * @param range the publisher's range
   * @param retention how long to keep it
   * @param access who may read it
   * @param replace whether {@value #REPLACE} was given
   */
  public record Publish(
      ImmutableMap<String, Info> data,
      DataRange range,
      Retention retention,
      Access access,
      boolean replace) {}

  /**
   * A parsed lookup.
   *
   * @param keys the keys, each once, in the order asked
   * @param range whose data the requester searches
   * @param waitFor 0 when the lookup answers at once; else how many keys it waits for
   * @param timeoutSeconds how long a waiting lookup waits; 0 is for ever
   */
  public record Lookup(ImmutableList<String> keys, DataRange range, int waitFor, long timeoutSeconds) {
    /** Whether the lookup waits for data that is not there yet. */
    public boolean waits() {
      return waitFor > 0;
    }
  }

  /**
   * A parsed unpublish.
   *
   * @param keys the keys, each once; empty means everything the caller's process published
   * @param range when given, only items on this range (as the caller sees it) are removed
   */
  public record Unpublish(ImmutableList<String> keys, Optional<DataRange> range) {}

  /** Reads a publish's info array. */
  public static Publish publish(List<Info> info) {
    Map<String, Info> data = new LinkedHashMap<>();
    DataRange range = DataRange.SESSION;
    Retention retention = Retention.DEFAULT;
    Set<Integer> uids = new LinkedHashSet<>();
    Set<Integer> gids = new LinkedHashSet<>();
    boolean replace = false;
    for (Info i : info) {
      String key = i.key();
      if (key.equals(RANGE)) {
        range = range(i.value(), true);
      } else if (key.equals(PERSISTENCE)) {
        retention = Retention.fromCode(integer(i.value(), PERSISTENCE));
      } else if (key.equals(ACCESS_PERMISSIONS)) {
        permissions(i.value(), uids, gids);
      } else if (key.equals(ACCESS_USERIDS)) {
        // The Standard puts these inside PMIX_ACCESS_PERMISSIONS; they are unambiguous enough
        // to honour at the top level too.
        uids.addAll(ids(i.value(), ACCESS_USERIDS));
      } else if (key.equals(ACCESS_GRPIDS)) {
        gids.addAll(ids(i.value(), ACCESS_GRPIDS));
      } else if (key.equals(REPLACE)) {
        replace = isTrue(i.value());
      } else if (Keys.byName(key).isPresent()) {
        requireNotRequired(i);
      } else if (data.putIfAbsent(key, i) != null) {
        throw new PmixException(Status.ERR_BAD_PARAM, "key '" + key + "' given twice in one publish");
      }
    }
    if (data.isEmpty()) {
      throw new PmixException(Status.ERR_BAD_PARAM, "a publish with no data");
    }
    Access access = Access.of(uids, gids);
    if (range == DataRange.CUSTOM && access.ownerOnly()) {
      // A custom range is the accessor list; with none it would be a publication nobody can
      // ever read, which the caller would take for success.
      throw new PmixException(
          Status.ERR_BAD_PARAM, "PMIX_RANGE_CUSTOM needs PMIX_ACCESS_PERMISSIONS naming its readers");
    }
    return new Publish(ImmutableMap.copyOf(data), range, retention, access, replace);
  }

  /** Reads a lookup's keys and directives. */
  public static Lookup lookup(List<String> keys, List<Info> info) {
    ImmutableList<String> k = keys(keys);
    if (k.isEmpty()) {
      throw new PmixException(Status.ERR_BAD_PARAM, "a lookup with no keys");
    }
    DataRange range = DataRange.SESSION;
    long wait = -1;
    long timeout = 0;
    for (Info i : info) {
      String key = i.key();
      if (key.equals(RANGE)) {
        range = range(i.value(), false);
      } else if (key.equals(WAIT)) {
        wait = waitCount(i.value());
      } else if (key.equals(TIMEOUT)) {
        timeout = integer(i.value(), TIMEOUT);
      } else {
        requireNotRequired(i);
      }
    }
    int waitFor;
    if (wait < 0) {
      waitFor = 0;
    } else if (wait == 0 || wait > k.size()) {
      // 0 is "all of them", the Standard's default; asking for more than were named is all.
      waitFor = k.size();
    } else {
      waitFor = (int) wait;
    }
    return new Lookup(k, range, waitFor, timeout);
  }

  /** Reads an unpublish's keys and directives. */
  public static Unpublish unpublish(List<String> keys, List<Info> info) {
    Optional<DataRange> range = Optional.empty();
    for (Info i : info) {
      if (i.key().equals(RANGE)) {
        range = Optional.of(range(i.value(), false));
      } else {
        requireNotRequired(i);
      }
    }
    return new Unpublish(keys(keys), range);
  }

  /** The attributes a publish acts on, for a query of supported attributes. */
  public static List<String> publishAttributes() {
    return List.of(RANGE, PERSISTENCE, ACCESS_PERMISSIONS, ACCESS_USERIDS, ACCESS_GRPIDS, REPLACE);
  }

  /** The attributes a lookup acts on. */
  public static List<String> lookupAttributes() {
    return List.of(RANGE, WAIT, TIMEOUT);
  }

  /** The attributes an unpublish acts on. */
  public static List<String> unpublishAttributes() {
    return List.of(RANGE);
  }

  // ---------------------------------------------------------------------------------------------

  private static ImmutableList<String> keys(List<String> keys) {
    Set<String> unique = new LinkedHashSet<>();
    for (String key : keys) {
      if (key == null || key.isEmpty()) {
        throw new PmixException(Status.ERR_BAD_PARAM, "an empty key");
      }
      unique.add(key);
    }
    return ImmutableList.copyOf(unique);
  }

  private static void requireNotRequired(Info i) {
    if (i.isRequired()) {
      throw new PmixException(
          Status.ERR_NOT_SUPPORTED, "required directive " + i.key() + " is not supported here");
    }
  }

  /**
   * A range directive. UNDEF means the default, SESSION, and so does an unknown code or INVALID in
   * a lookup or an unpublish (a publish with one is refused). RM names the host environment, which a
   * store has no process set for: refused rather than stored where nobody could reach it. A
   * requester has no accessor list, so CUSTOM means nothing as a search range.
   */
  private static DataRange range(Value v, boolean publisher) {
    long code = integer(v, RANGE);
    Optional<DataRange> known =
        code > 0xFF ? Optional.<DataRange>empty() : DataRange.fromCode((int) code);
    if (!publisher && (known.isEmpty() || known.get() == DataRange.INVALID)) {
      // A search range we do not know, or INVALID, searches the session, as PRRTE does (its
      // data server filters by the publisher's range only): Open MPI 5's MPI_Lookup_name with
      // MPI_INFO_NULL sends an uninitialised range (0, 32, 239, ...; 255 in a spawned child).
      return DataRange.SESSION;
    }
    DataRange r =
        known.orElseThrow(() -> new PmixException(Status.ERR_BAD_PARAM, "unknown range " + code));
    return switch (r) {
      case UNDEF -> DataRange.SESSION;
      case RM -> throw new PmixException(Status.ERR_NOT_SUPPORTED, "PMIX_RANGE_RM is not supported");
      case INVALID -> throw new PmixException(Status.ERR_BAD_PARAM, "PMIX_RANGE_INVALID");
      case CUSTOM -> {
        if (!publisher) {
          throw new PmixException(Status.ERR_BAD_PARAM, "PMIX_RANGE_CUSTOM names no set to search");
        }
        yield r;
      }
      default -> r;
    };
  }

  /** A PMIX_WAIT value: an int (0 is all keys), or a bool (true is all keys, false no wait). */
  private static long waitCount(Value v) {
    if (v instanceof Value.Bool b) {
      return b.value() ? 0 : -1;
    }
    if (v instanceof Value.Undef) {
      return 0;
    }
    return integer(v, WAIT);
  }

  /** PMIX_INFO_TRUE: an UNDEF value (a flag given with no data) or a BOOL that is true. */
  private static boolean isTrue(Value v) {
    return v instanceof Value.Undef || (v instanceof Value.Bool b && b.value());
  }

  /** A non-negative integer of any integer type, else BAD_PARAM naming {@code what}. */
  private static long integer(Value v, String what) {
    long n;
    if (v instanceof Value.UInt u) {
      n = u.value();
    } else if (v instanceof Value.Int i) {
      n = i.value();
    } else {
      throw new PmixException(Status.ERR_BAD_PARAM, what + " is not an integer: " + v);
    }
    if (n < 0) {
      throw new PmixException(Status.ERR_BAD_PARAM, what + " is negative: " + n);
    }
    return n;
  }

  private static void permissions(Value v, Set<Integer> uids, Set<Integer> gids) {
    if (!(v instanceof DataArray a) || !isInfoArray(a) || a.items().isEmpty()) {
      throw new PmixException(
          Status.ERR_BAD_PARAM, ACCESS_PERMISSIONS + " is not a non-empty array of infos: " + v);
    }
    for (Value x : a.items()) {
      if (!(x instanceof Info i)) {
        throw new PmixException(Status.ERR_BAD_PARAM, ACCESS_PERMISSIONS + " holds " + x);
      }
      if (i.key().equals(ACCESS_USERIDS)) {
        uids.addAll(ids(i.value(), ACCESS_USERIDS));
      } else if (i.key().equals(ACCESS_GRPIDS)) {
        gids.addAll(ids(i.value(), ACCESS_GRPIDS));
      } else {
        // A permission we cannot enforce: storing the data anyway would store it unrestricted.
        throw new PmixException(
            Status.ERR_BAD_PARAM, "unknown access permission " + i.key() + " in " + ACCESS_PERMISSIONS);
      }
    }
  }

  private static boolean isInfoArray(DataArray a) {
    return a.elementType() == DataType.INFO || a.elementType() == DataType.VALUE;
  }

  /**
   * A list of ids: a non-empty data array of integers, or one integer (refusing a lone id would
   * only push publishers into building a one-element array). Each must fit 32 unsigned bits.
   */
  private static List<Integer> ids(Value v, String what) {
    List<Value> items;
    if (v instanceof DataArray a) {
      items = a.items();
      if (items.isEmpty()) {
        throw new PmixException(Status.ERR_BAD_PARAM, what + " is an empty list");
      }
    } else {
      items = List.of(v);
    }
    ImmutableList.Builder<Integer> out = ImmutableList.builder();
    for (Value x : items) {
      long id = integer(x, what);
      if (id > 0xFFFF_FFFFL) {
        throw new PmixException(Status.ERR_BAD_PARAM, what + " holds " + id + ", not a 32-bit id");
      }
      out.add((int) id);
    }
    return out.build();
  }

  /** The value of {@code key} in {@code info}, if present. */
  public static @Nullable Value find(List<Info> info, String key) {
    for (Info i : info) {
      if (i.key().equals(key)) {
        return i.value();
      }
    }
    return null;
  }
}
