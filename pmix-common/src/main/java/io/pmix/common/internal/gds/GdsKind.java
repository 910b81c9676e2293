package io.pmix.common.internal.gds;

import org.jspecify.annotations.Nullable;

/**
 * The gds modules of libpmix 4.2.2 that pmix-java knows, with the facts libpmix's selection uses
 * (docs/gds.md section 1).
 */
public enum GdsKind {
  /** The shared-memory store with flagged records and a mutex pair per local process. */
  DS21("ds21", 30, 120, 20, "PMIX_DSTORE_21_BASE_PATH"),
  /** The shared-memory store with named marker records and one lock per directory. */
  DS12("ds12", 20, 100, 20, "PMIX_DSTORE_12_BASE_PATH"),
  /** The store in the process, fed through the socket. */
  HASH("hash", 10, 100, 10, null);

  /** The base-path variable every dstore module falls back to (and the one ds12's server sets). */
  public static final String ESH_BASE_PATH = "PMIX_DSTORE_ESH_BASE_PATH";

  private final String libpmixName;
  private final int componentPriority;
  private final int namedScore;
  private final int defaultScore;
  private final @Nullable String basePathVariable;

  GdsKind(
      String libpmixName,
      int componentPriority,
      int namedScore,
      int defaultScore,
      @Nullable String basePathVariable) {
    this.libpmixName = libpmixName;
    this.componentPriority = componentPriority;
    this.namedScore = namedScore;
    this.defaultScore = defaultScore;
    this.basePathVariable = basePathVariable;
  }

  /** The name libpmix uses (in {@code PMIX_GDS_MODULE}, {@code PMIX_MCA_gds} and handshakes). */
  public String libpmixName() {
    return libpmixName;
  }

  /** The priority of libpmix's component: the order of its active modules. */
  int componentPriority() {
    return componentPriority;
  }

  /** The score of {@code assign_module} when this module is named in the list. */
  int namedScore() {
    return namedScore;
  }

  /** The score when it is not named (or no list is given). */
  int defaultScore() {
    return defaultScore;
  }

  /** Whether the module reads shared memory. */
  public boolean isDstore() {
    return this != HASH;
  }

  /**
   * The module's own base-path variable ({@code PMIX_DSTORE_<NN>_BASE_PATH}); {@code null} for
   * hash.
   */
  @Nullable String basePathVariable() {
    return basePathVariable;
  }

  /** The module of this libpmix name, or {@code null}. */
  static @Nullable GdsKind byLibpmixName(String name) {
    for (GdsKind k : values()) {
      if (k.libpmixName.equals(name)) {
        return k;
      }
    }
    return null;
  }
}
