package io.pmix.common.internal.gds;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * libpmix 4.2.2's choice of the gds module a client uses with its server (docs/gds.md section 1),
 * as a pure function of the environment: which modules are active ({@code PMIX_MCA_gds} includes
 * or excludes components; a dstore module also needs its base path), and how {@code
 * PMIX_GDS_MODULE} scores them. The order of the names inside {@code PMIX_GDS_MODULE} does not
 * matter; their scores do.
 *
 * <p>libpmix also drops a dstore module whose attach fails at init (no initial segment, no free
 * lock slot) and then takes the next one: {@link #candidates} lists them in that order, so a
 * connector tries each until one attaches. Stateless and thread-safe.
 */
public final class GdsSelection {
  /** The variable a server sets to the modules it offers. */
  public static final String GDS_MODULE = "PMIX_GDS_MODULE";

  /** The MCA variable that restricts which components are opened at all. */
  public static final String MCA_GDS = "PMIX_MCA_gds";

  private GdsSelection() {}

  /**
   * The modules a libpmix client would use, best first: the first is libpmix's choice, the next
   * ones its fallbacks should attaching fail. Hash, when active, is always among them.
   *
   * @param env the process environment
   */
  public static List<GdsKind> candidates(Map<String, String> env) {
    List<GdsKind> active = new ArrayList<>();
    for (GdsKind k : GdsKind.values()) { // component-priority order: ds21, ds12, hash
      if (opened(k, env.get(MCA_GDS)) && (!k.isDstore() || basePath(k, env).isPresent())) {
        active.add(k);
      }
    }
    String list = env.get(GDS_MODULE);
    Set<String> named = new HashSet<>();
    if (list != null) {
      named.addAll(Arrays.asList(list.split(",", -1)));
    }
    // A stable sort, highest score first: equal scores keep the component-priority order, as
    // libpmix's strict "priority < pri" comparison over its ordered list of active modules does.
    // An insertion sort of at most three kinds, not List.sort with a comparator: that is one
    // more class to load in every first init (docs/architecture.md, "What the class loader
    // costs").
    for (int i = 1; i < active.size(); i++) {
      GdsKind k = active.get(i);
      int score = score(k, named);
      int j = i;
      while (j > 0 && score(active.get(j - 1), named) < score) {
        active.set(j, active.get(j - 1));
        j--;
      }
      active.set(j, k);
    }
    return List.copyOf(active);
  }

  /** {@code k}'s priority: its named one when {@code PMIX_GDS_MODULE} lists it, else its default. */
  private static int score(GdsKind k, Set<String> named) {
    return named.contains(k.libpmixName()) ? k.namedScore() : k.defaultScore();
  }

  /**
   * The directory a client of module {@code kind} attaches to: {@code PMIX_DSTORE_<NN>_BASE_PATH},
   * else {@code PMIX_DSTORE_ESH_BASE_PATH}; empty for hash or when neither is set.
   */
  public static Optional<Path> basePath(GdsKind kind, Map<String, String> env) {
    if (!kind.isDstore()) {
      return Optional.empty();
    }
    String own = env.get(kind.basePathVariable());
    if (own == null) {
      own = env.get(GdsKind.ESH_BASE_PATH);
    }
    return own == null || own.isEmpty() ? Optional.empty() : Optional.of(Path.of(own));
  }

  /**
   * Whether the MCA component selection {@code mca} (null: everything) opens {@code kind}: a list
   * names the components to open, a list starting with {@code ^} the ones not to open.
   */
  static boolean opened(GdsKind kind, @Nullable String mca) {
    if (mca == null || mca.isBlank()) {
      return true;
    }
    String s = mca.strip();
    boolean exclude = s.startsWith("^");
    if (exclude) {
      s = s.substring(1);
    }
    boolean listed = false;
    for (String name : s.split(",", -1)) {
      if (name.strip().equals(kind.libpmixName())) {
        listed = true;
      }
    }
    return exclude != listed;
  }
}
