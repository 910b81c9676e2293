package io.pmix.common.internal.gds;

import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Where a connector finds the job-level data and the modex data of the processes it asks about:
 * one of libpmix's "gds" modules. The socket store ("hash": what the server sent, kept in the
 * process) is one implementation; {@link DstoreReader} reads the shared-memory stores "ds12" and
 * "ds21" of libpmix 4.2.2 servers.
 *
 * <p>A module answers for rank-level data (a rank's job-level keys and its committed modex keys)
 * and for job-level data (rank {@link Proc#RANK_WILDCARD}). It does not resolve realms (node, app,
 * session info arrays), a process's own puts or the special keys a client answers itself: those
 * stay with the connector, as in libpmix, where a dstore client keeps them in its own hash store.
 *
 * <p>Implementations say whether they are thread-safe; a closed module must not be used.
 */
public interface GdsModule extends AutoCloseable {
  /** The module's name as libpmix spells it, and as a client announces it in its handshake. */
  String name();

  /**
   * The value of {@code key} for {@code proc} (a rank, or {@link Proc#RANK_WILDCARD} for
   * job-level data).
   *
   * @throws io.pmix.common.PmixException if the store cannot be read (a corrupt segment, a lock
   *     that is not granted in time)
   */
  Fetched fetch(Proc proc, String key);

  /**
   * Every key of {@code proc} (a rank, or {@link Proc#RANK_WILDCARD}), in the order stored; empty
   * when the store has no data for that process (libpmix: {@code PMIX_ERR_PROC_ENTRY_NOT_FOUND}).
   *
   * @throws io.pmix.common.PmixException as {@link #fetch}
   */
  Optional<Map<String, Value>> fetchAll(Proc proc);

  /**
   * Every record of {@code proc} as stored, in order, a key stored more than once (libpmix keeps
   * one {@code pmix.pdata} record per process in the job-level data) once per record; empty as
   * {@link #fetchAll}.
   *
   * @throws io.pmix.common.PmixException as {@link #fetch}
   */
  Optional<List<Info>> fetchRecords(Proc proc);

  /**
   * Runs {@code reads} (calls of this module's fetch methods) now, only if none of them needs to
   * wait for anyone, for a thread that must never wait (a client's progress thread); returns
   * false, having run nothing, when one would. This default never tries.
   *
   * @throws io.pmix.common.PmixException if the store cannot be read (a corrupt segment), or what
   *     {@code reads} throws
   */
  default boolean readIfFree(Consumer<GdsModule> reads) {
    return false;
  }

  /** Releases what the module holds (mappings, descriptors); idempotent. */
  @Override
  void close();

  /** The outcome of {@link #fetch}. */
  sealed interface Fetched {
    /** The value is stored. */
    record Found(Value value) implements Fetched {}

    /**
     * The process has data here but not this key (libpmix: {@code PMIX_ERR_NOT_FOUND}); a client
     * then asks its server.
     */
    record NoKey() implements Fetched {}

    /**
     * Nothing is stored for the process, or for its namespace, yet (libpmix: {@code
     * PMIX_ERR_PROC_ENTRY_NOT_FOUND}); a client then asks its server.
     */
    record NoProc() implements Fetched {}
  }
}
