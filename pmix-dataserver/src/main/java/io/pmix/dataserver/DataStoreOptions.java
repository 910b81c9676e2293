package io.pmix.dataserver;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.internal.LazyLogger;
import java.time.Duration;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The parameters of a {@link DataStore}, fixed when the store is built: the spec's retention
 * bounds read once at start and never changed while the store runs. Immutable; build with {@link
 * #builder()}.
 *
 * <p>The two bounds are the MCA parameters of the spec, readable from the environment as {@code
 * PMIX_MCA_<name>} (the convention PMIx users know) by {@link Builder#environment(Map)}:
 *
 * <table>
 *   <caption>Parameters</caption>
 *   <tr><th>name</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@value #TIMEOUT_PARAMETER}</td><td>300</td><td>seconds of idleness after which a
 *       {@code PMIX_PERSIST_INDEF} or unread {@code PMIX_PERSIST_FIRST_READ} item is removed;
 *       0 disables the timeout</td></tr>
 *   <tr><td>{@value #MAX_SIZE_PARAMETER}</td><td>16777216</td><td>the most bytes of published
 *       data the store holds for one uid; reaching it evicts that uid's least recently used items;
 *       0 disables the cap</td></tr>
 * </table>
 */
public final class DataStoreOptions {
  /** The idle timeout's parameter name, as the spec spells it. */
  public static final String TIMEOUT_PARAMETER = "prte_data_server_timeout";

  /** The per-uid cap's parameter name, as the spec spells it. */
  public static final String MAX_SIZE_PARAMETER = "prte_data_server_max_size";

  /** The prefix that turns a parameter name into an environment variable. */
  public static final String ENV_PREFIX = "PMIX_MCA_";

  /** The default idle timeout: five minutes. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(5);

  /** The default per-uid cap: 16 MiB. */
  public static final long DEFAULT_MAX_BYTES_PER_UID = 16L << 20;

  /** The default bound on lookups waiting at once. */
  public static final int DEFAULT_MAX_PENDING_LOOKUPS = 65_536;

  private final Duration idleTimeout;
  private final long maxBytesPerUid;
  private final int maxPendingLookups;
  private final LongSupplier clock;
  private final System.Logger logger;

  private DataStoreOptions(Builder b) {
    this.idleTimeout = b.idleTimeout;
    this.maxBytesPerUid = b.maxBytesPerUid;
    this.maxPendingLookups = b.maxPendingLookups;
    this.clock = b.clock;
    this.logger = b.logger;
  }

  /** A builder holding the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** The defaults. */
  public static DataStoreOptions defaults() {
    return builder().build();
  }

  /**
   * The defaults overridden by whichever {@code PMIX_MCA_} parameters {@code env} sets.
   *
   * @throws IllegalArgumentException if a parameter is set to something that is not a
   *     non-negative integer
   */
  public static DataStoreOptions fromEnvironment(Map<String, String> env) {
    return builder().environment(env).build();
  }

  /** The idle timeout; {@link Duration#ZERO} when it is disabled. */
  public Duration idleTimeout() {
    return idleTimeout;
  }

  /** The per-uid cap in bytes; 0 when it is disabled. */
  public long maxBytesPerUid() {
    return maxBytesPerUid;
  }

  /** The most lookups that may wait at once; more fail with {@code PMIX_ERR_OUT_OF_RESOURCE}. */
  public int maxPendingLookups() {
    return maxPendingLookups;
  }

  /** The clock: monotonic nanoseconds, {@link System#nanoTime()} unless a test injects one. */
  public LongSupplier clock() {
    return clock;
  }

  /** Where the store logs. */
  public System.Logger logger() {
    return logger;
  }

  /** A builder starting from these options. */
  public Builder toBuilder() {
    return new Builder()
        .idleTimeout(idleTimeout)
        .maxBytesPerUid(maxBytesPerUid)
        .maxPendingLookups(maxPendingLookups)
        .clock(clock)
        .logger(logger);
  }

  @Override
  public String toString() {
    return TIMEOUT_PARAMETER
        + "="
        + idleTimeout.toSeconds()
        + "s, "
        + MAX_SIZE_PARAMETER
        + "="
        + maxBytesPerUid
        + ", maxPendingLookups="
        + maxPendingLookups;
  }

  /** Builds {@link DataStoreOptions}. Not thread-safe. */
  public static final class Builder {
    private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
    private long maxBytesPerUid = DEFAULT_MAX_BYTES_PER_UID;
    private int maxPendingLookups = DEFAULT_MAX_PENDING_LOOKUPS;
    private LongSupplier clock = System::nanoTime;
    private System.Logger logger = LazyLogger.named("io.pmix.dataserver");

    private Builder() {}

    /**
     * The idle timeout ({@value #TIMEOUT_PARAMETER}); {@link Duration#ZERO} disables it.
     *
     * @throws IllegalArgumentException if negative
     */
    @CanIgnoreReturnValue
    public Builder idleTimeout(Duration timeout) {
      requireNonNull(timeout, "timeout");
      checkArgument(!timeout.isNegative(), "negative idle timeout %s", timeout);
      this.idleTimeout = timeout;
      return this;
    }

    /**
     * The per-uid cap in bytes ({@value #MAX_SIZE_PARAMETER}); 0 disables it.
     *
     * @throws IllegalArgumentException if negative
     */
    @CanIgnoreReturnValue
    public Builder maxBytesPerUid(long bytes) {
      checkArgument(bytes >= 0, "negative cap %s", bytes);
      this.maxBytesPerUid = bytes;
      return this;
    }

    /**
     * The most lookups that may wait at once.
     *
     * @throws IllegalArgumentException if not positive
     */
    @CanIgnoreReturnValue
    public Builder maxPendingLookups(int n) {
      checkArgument(n > 0, "maxPendingLookups must be positive: %s", n);
      this.maxPendingLookups = n;
      return this;
    }

    /**
     * The clock, monotonic nanoseconds like {@link System#nanoTime()}: tests inject one to drive
     * timeouts without sleeping. Borrowed: called from whatever thread uses the store.
     */
    @CanIgnoreReturnValue
    public Builder clock(LongSupplier nanoClock) {
      this.clock = requireNonNull(nanoClock, "nanoClock");
      return this;
    }

    /** The logger the store reports through (borrowed). */
    @CanIgnoreReturnValue
    public Builder logger(System.Logger log) {
      this.logger = requireNonNull(log, "log");
      return this;
    }

    /**
     * Applies the {@code PMIX_MCA_}{@value #TIMEOUT_PARAMETER} and {@code PMIX_MCA_}{@value
     * #MAX_SIZE_PARAMETER} variables that {@code env} sets (seconds and bytes, non-negative
     * decimal integers); unset ones leave the builder as it is.
     *
     * @throws IllegalArgumentException naming the variable if one is malformed
     */
    @CanIgnoreReturnValue
    public Builder environment(Map<String, String> env) {
      requireNonNull(env, "env");
      String t = env.get(ENV_PREFIX + TIMEOUT_PARAMETER);
      if (t != null) {
        idleTimeout(Duration.ofSeconds(parseNonNegative(ENV_PREFIX + TIMEOUT_PARAMETER, t)));
      }
      String m = env.get(ENV_PREFIX + MAX_SIZE_PARAMETER);
      if (m != null) {
        maxBytesPerUid(parseNonNegative(ENV_PREFIX + MAX_SIZE_PARAMETER, m));
      }
      return this;
    }

    /** The options. */
    public DataStoreOptions build() {
      return new DataStoreOptions(this);
    }

    /** Parses a non-negative decimal integer, naming {@code what} when it is not one. */
    static long parseNonNegative(String what, String text) {
      long v;
      try {
        v = Long.parseLong(text.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(what + " is not an integer: '" + text + "'", e);
      }
      if (v < 0) {
        throw new IllegalArgumentException(what + " is negative: " + v);
      }
      return v;
    }
  }
}
