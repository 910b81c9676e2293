package io.pmix.common.internal.gds;

import static java.util.Objects.requireNonNull;

import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The gds module a client uses with its server, chosen and attached as a libpmix 4.2.2 client
 * does at init (docs/gds.md section 1): the candidates of {@link GdsSelection} best first, each
 * shared-memory one attached in turn (its lock, its first initial segment) until one attaches,
 * else hash. The chosen module's name is what the client announces in its handshake, so the
 * server stores the namespace's modex data where the client reads it.
 *
 * <p>Servers of OpenPMIx 5.x and later have no ds21 or ds12 (their shared-memory module, shmem2,
 * holds C structures at fixed addresses that only the same libpmix build can read, and their
 * modex data travels through the socket as with hash; docs/gds.md section 6): under them the
 * choice is hash whatever the environment says, as a 4.2.2 client under such a server chooses
 * too (it scores {@code shmem2,hash} as hash).
 *
 * <p>Stateless and thread-safe; the reader it returns is the caller's to close.
 */
public final class GdsChoice {
  private static final System.Logger LOG = LazyLogger.of(GdsChoice.class);

  /**
   * What was chosen.
   *
   * @param kind the module, announced as {@link GdsKind#libpmixName()}
   * @param reader the attached store when {@code kind} is a shared-memory one (owned by the
   *     caller from now on), empty for hash
   * @param skipped the better candidates that could not be attached, each with the reason
   */
  public record Chosen(GdsKind kind, Optional<DstoreReader> reader, List<String> skipped) {
    /** Checks the fields. */
    public Chosen {
      requireNonNull(kind, "kind");
      requireNonNull(reader, "reader");
      skipped = List.copyOf(skipped);
      if (kind.isDstore() != reader.isPresent()) {
        throw new IllegalArgumentException(kind + " with reader " + reader);
      }
    }
  }

  private GdsChoice() {}

  /**
   * Chooses and attaches.
   *
   * @param env the process environment (what the server exported)
   * @param ownNspace this process's namespace (its ds21 lock is the one it reads under)
   * @param format the buffer type the server packs values in for this client
   * @param lockTimeout how long one read waits for the store's lock at most
   */
  public static Chosen choose(
      Map<String, String> env, String ownNspace, WireFormat format, Duration lockTimeout) {
    requireNonNull(env, "env");
    requireNonNull(ownNspace, "ownNspace");
    requireNonNull(format, "format");
    requireNonNull(lockTimeout, "lockTimeout");
    List<String> skipped = new ArrayList<>();
    if (isLaterServer(env)) {
      return new Chosen(GdsKind.HASH, Optional.empty(), skipped);
    }
    for (GdsKind k : GdsSelection.candidates(env)) {
      if (!k.isDstore()) {
        return new Chosen(k, Optional.empty(), skipped);
      }
      Path base = GdsSelection.basePath(k, env).orElseThrow();
      try {
        return new Chosen(
            k, Optional.of(DstoreReader.attach(k, base, ownNspace, format, lockTimeout)), skipped);
      } catch (RuntimeException | LinkageError e) {
        // libpmix drops a module whose init fails and takes the next one; so do we, and the
        // native library missing (JNA) is one more such failure.
        String why = k.libpmixName() + " at " + base + ": " + e;
        LOG.log(Level.DEBUG, "gds {0} not attached, trying the next module", why);
        skipped.add(why);
      }
    }
    // Every candidate failed, or hash was excluded (PMIX_MCA_gds): the socket always works.
    return new Chosen(GdsKind.HASH, Optional.empty(), skipped);
  }

  /**
   * Whether the server is an OpenPMIx 5.x or later one: its {@code PMIX_VERSION} says so, or it
   * offers modules only such servers have.
   */
  static boolean isLaterServer(Map<String, String> env) {
    String modules = env.get(GdsSelection.GDS_MODULE);
    if (modules != null) {
      for (String m : modules.split(",", -1)) {
        if (m.strip().startsWith("shmem")) {
          return true;
        }
      }
    }
    Integer major = major(env.get("PMIX_VERSION"));
    return major != null && major >= 5;
  }

  private static @Nullable Integer major(@Nullable String version) {
    if (version == null) {
      return null;
    }
    String v = version.strip();
    int end = 0;
    while (end < v.length() && Character.isDigit(v.charAt(end))) {
      end++;
    }
    if (end == 0 || end > 6) {
      return null;
    }
    return Integer.parseInt(v.substring(0, end));
  }
}
