package io.pmix.dataserver;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableList;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.List;

/**
 * The answer to a lookup: a status and the data found, one {@link Value.PData} (publisher, key,
 * value) per key found, in the order the keys were asked. Immutable.
 *
 * <p>The statuses a store gives: {@code PMIX_SUCCESS} (every key found), {@code
 * PMIX_ERR_PARTIAL_SUCCESS} (some found; they are in {@link #data()}), {@code PMIX_ERR_NOT_FOUND},
 * {@code PMIX_ERR_NO_PERMISSIONS} (nothing returned, and some key was held by data the requester
 * is not permitted to read), {@code PMIX_ERR_TIMEOUT} (a waiting lookup's time ran out), {@code
 * PMIX_ERR_BAD_PARAM} and {@code PMIX_ERR_NOT_SUPPORTED} (the request was malformed or asked for
 * something this store does not do), {@code PMIX_ERR_OUT_OF_RESOURCE} (too many lookups waiting),
 * or the status a waiting lookup was cancelled with.
 *
 * @param status what happened
 * @param data the data found; empty unless the status is SUCCESS or PARTIAL_SUCCESS
 */
public record LookupResult(Status status, List<Value.PData> data) {
  /** Copies the data and checks that only a success carries any. */
  public LookupResult {
    requireNonNull(status, "status");
    data = ImmutableList.copyOf(data);
    checkArgument(
        data.isEmpty() || status.equals(Status.SUCCESS) || status.equals(Status.ERR_PARTIAL_SUCCESS),
        "a %s lookup result carries no data",
        status);
  }

  /** A result with no data. */
  public static LookupResult of(Status status) {
    return new LookupResult(status, List.of());
  }

  /** Whether data was found: the status is SUCCESS or PARTIAL_SUCCESS. */
  public boolean found() {
    return status.equals(Status.SUCCESS) || status.equals(Status.ERR_PARTIAL_SUCCESS);
  }
}
