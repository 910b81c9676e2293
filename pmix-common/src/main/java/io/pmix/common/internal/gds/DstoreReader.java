package io.pmix.common.internal.gds;

import static java.util.Objects.requireNonNull;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A reader of the shared-memory store ("ds21" or "ds12") a libpmix 4.2.2 server writes for its
 * clients (docs/gds.md): the job-level data of a namespace (rank WILDCARD), each rank's job-level
 * keys and the modex keys its commits (and, for processes of other nodes, fences and direct
 * modex) stored, as a libpmix client reads them.
 *
 * <p>Every read happens under the store's reader lock, taken the way libpmix's clients take it:
 * ds21's mutex pair of this process's slot in the lock segment of its own namespace, ds12's
 * rwlock (or, in builds without one, the fcntl lock) of the directory. Under the lock the reader
 * follows the segments as they grow, finds the rank's records and copies the bytes of what it
 * wants; the values are decoded after the lock is released. Everything read is checked: a
 * corrupt segment is a {@link PmixException} with {@code PMIX_ERR_UNPACK_FAILURE} (or the codec's
 * status for a bad value), never an unchecked exception, an endless walk or an allocation larger
 * than the segments.
 *
 * <p>Owns its mappings and descriptors; {@link #close} releases them. Thread-safe: calls are
 * serialised.
 */
public final class DstoreReader implements GdsModule {
  /** Size of one namespace entry of the initial segment ({@code ns_seg_info_t}). */
  static final int NS_INFO_SIZE = 288;

  /** Offset of the first namespace entry ({@code num_elems}, {@code full}). */
  static final int NS_INFO_BASE = 16;

  /** Size of the namespace name field ({@code PMIX_MAX_NSLEN + 1}). */
  static final int NS_NAME_SIZE = 256;

  static final int NUM_META_SEG = 272;
  static final int NUM_DATA_SEG = 280;

  /** Size of one {@code rank_meta_info}. */
  static final int RANK_META_SIZE = 24;

  /** How many initial segments a namespace table may span before we call it corrupt. */
  private static final int MAX_INITIAL_SEGMENTS = 4096;

  /** How many meta or data segments one namespace may have before we call it corrupt. */
  private static final long MAX_NS_SEGMENTS = 65_536;

  private final GdsKind kind;
  private final SegmentSource source;
  private final ReaderLock lock;
  private final WireFormat format;
  private final Duration lockTimeout;
  private final DstoreFormat records;

  /**
   * Held by a read (and the close), one at a time; tried, not waited for, by {@link #readIfFree},
   * whose reads take it again (it is reentrant).
   */
  private final ReentrantLock reading = new ReentrantLock();

  /** Whether the store's lock is held by {@link #readIfFree}; {@link #reading} held. */
  private boolean storeLocked;

  private final List<Segment> initial = new ArrayList<>();
  private final Map<String, NsSegments> namespaces = new HashMap<>();
  private boolean closed;

  /** The meta and data segments of one namespace mapped so far, and what searches learned. */
  private static final class NsSegments {
    final List<Segment> meta = new ArrayList<>();
    final List<Segment> data = new ArrayList<>();
    final Map<Integer, ChainIndex> chains = new HashMap<>();
  }

  /** What a walk found, copied out under the lock (never compared: an array is fine). */
  @SuppressWarnings("ArrayRecordComponent")
  private record Raw(String key, byte[] data) {}

  DstoreReader(
      GdsKind kind, SegmentSource source, ReaderLock lock, WireFormat format, Duration lockTimeout) {
    if (!kind.isDstore()) {
      throw new IllegalArgumentException(kind + " is not a shared-memory store");
    }
    this.kind = kind;
    this.source = requireNonNull(source, "source");
    this.lock = requireNonNull(lock, "lock");
    this.format = requireNonNull(format, "format");
    this.lockTimeout = requireNonNull(lockTimeout, "lockTimeout");
    this.records = kind == GdsKind.DS21 ? DstoreFormat.DS21 : DstoreFormat.DS12;
  }

  /**
   * Attaches to the store of module {@code kind} in {@code basePath} (what the server exported as
   * the module's base path) as a client of namespace {@code ownNspace} does: its lock, then the
   * first initial segment. libpmix's client fails its module's init the same way when one of them
   * is missing, and falls back to the next module.
   *
   * @param format the buffer type the values were packed in (the clients' {@code
   *     PMIX_BFROP_BUFFER_TYPE})
   * @param lockTimeout how long one read waits for the lock at most
   * @throws PmixException {@code PMIX_ERR_NOT_AVAILABLE} if the store cannot be attached (missing
   *     files, no free ds21 slot), {@code PMIX_ERR_NOT_SUPPORTED} if the native locks are not
   *     reachable, {@code PMIX_ERR_UNPACK_FAILURE} if a lock segment is corrupt
   */
  public static DstoreReader attach(
      GdsKind kind, Path basePath, String ownNspace, WireFormat format, Duration lockTimeout) {
    checkNamespace(ownNspace);
    DirectorySegments dir = new DirectorySegments(basePath);
    ReaderLock lock = openLock(kind, dir, ownNspace);
    DstoreReader r = new DstoreReader(kind, dir, lock, format, lockTimeout);
    try {
      r.initial.add(dir.open(initialName(0), false));
      return r;
    } catch (RuntimeException e) {
      r.close();
      throw e;
    }
  }

  private static ReaderLock openLock(GdsKind kind, DirectorySegments dir, String ownNspace) {
    if (kind == GdsKind.DS21) {
      return Ds21Lock.attach(dir, ownNspace);
    }
    if (kind != GdsKind.DS12) {
      throw new IllegalArgumentException(kind + " is not a shared-memory store");
    }
    String file = "dstore_sm.lock";
    long size = dir.size(file);
    if (size < 0) {
      throw new PmixException(Status.ERR_NOT_AVAILABLE, "no " + dir.path(file));
    }
    // The fcntl build's lock file is empty; the pthread build's holds the rwlock (a page).
    return size == 0 ? Ds12FcntlLock.open(dir.path(file)) : new Ds12RwLock(dir.open(file, true));
  }

  @Override
  public String name() {
    return kind.libpmixName();
  }

  /** The module read. */
  public GdsKind kind() {
    return kind;
  }

  @Override
  public Fetched fetch(Proc proc, String key) {
    requireNonNull(key, "key");
    byte[] wanted = key.getBytes(StandardCharsets.UTF_8);
    Optional<List<Raw>> raw = read(proc, wanted);
    if (raw.isEmpty()) {
      return new Fetched.NoProc();
    }
    if (raw.get().isEmpty()) {
      return new Fetched.NoKey();
    }
    return new Fetched.Found(decode(raw.get().get(0)));
  }

  @Override
  public Optional<Map<String, Value>> fetchAll(Proc proc) {
    Optional<List<Raw>> raw = read(proc, null);
    if (raw.isEmpty()) {
      return Optional.empty();
    }
    Map<String, Value> out = new LinkedHashMap<>();
    for (Raw r : raw.get()) {
      out.putIfAbsent(r.key(), decode(r));
    }
    return Optional.of(out);
  }

  @Override
  public Optional<List<Info>> fetchRecords(Proc proc) {
    return records(read(proc, null));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: when no other thread of this process is reading this store and the store's lock is
   * granted at once (a zero timeout); the reads then run under that one lock (their values
   * decoded under it too). Mapping the segments the server added since is the only other work,
   * and it does not wait for anyone.
   */
  @Override
  public boolean readIfFree(Consumer<GdsModule> reads) {
    requireNonNull(reads, "reads");
    if (!reading.tryLock()) {
      return false;
    }
    try {
      if (closed) {
        throw new IllegalStateException("the " + name() + " reader is closed");
      }
      if (storeLocked) {
        throw new IllegalStateException("readIfFree within readIfFree");
      }
      try {
        lock.lock(Duration.ZERO);
      } catch (PmixException e) {
        if (e.status().equals(Status.ERR_TIMEOUT)) {
          return false; // the server is writing, or a process holds it: read where one may wait
        }
        throw e;
      }
      storeLocked = true;
      try {
        reads.accept(this);
      } finally {
        storeLocked = false;
        lock.unlock();
      }
      return true;
    } finally {
      reading.unlock();
    }
  }

  private Optional<List<Info>> records(Optional<List<Raw>> raw) {
    if (raw.isEmpty()) {
      return Optional.empty();
    }
    List<Info> out = new ArrayList<>(raw.get().size());
    for (Raw r : raw.get()) {
      try {
        out.add(Info.of(r.key(), decode(r)));
      } catch (IllegalArgumentException e) {
        throw new PmixException(Status.ERR_UNPACK_FAILURE, "gds key " + r.key() + ": " + e, e);
      }
    }
    return Optional.of(out);
  }

  private Value decode(Raw r) {
    PmixReader in = new PmixReader(WireBuffer.wrap(r.data()), format);
    try {
      return in.unpackOne(DataType.VALUE);
    } catch (PmixException e) {
      throw new PmixException(
          e.status(), "gds value of " + r.key() + " does not decode: " + e.getMessage(), e);
    }
  }

  /**
   * The records of {@code proc} (only the first one named {@code key}, when given), copied under
   * the lock; empty when the store has nothing for the process.
   */
  private Optional<List<Raw>> read(Proc proc, byte @Nullable [] key) {
    reading.lock();
    try {
      check(proc);
      if (storeLocked) {
        return readLocked(proc, key); // within readIfFree, on its thread
      }
      lock.lock(lockTimeout);
      try {
        return readLocked(proc, key);
      } finally {
        lock.unlock();
      }
    } finally {
      reading.unlock();
    }
  }

  /** Whether {@code proc} may be read here; {@link #reading} held. */
  private void check(Proc proc) {
    requireNonNull(proc, "proc");
    if (closed) {
      throw new IllegalStateException("the " + name() + " reader is closed");
    }
    if (!namespaces.containsKey(proc.nspace())) {
      checkNamespace(proc.nspace()); // a namespace found in the store was checked before
    }
    if (proc.isSpecialRank() && proc.rank() != Proc.RANK_WILDCARD) {
      throw new IllegalArgumentException("a dstore holds ranks and WILDCARD, not " + proc);
    }
  }

  /** {@link #read} with {@link #reading} and the store's lock held. */
  private Optional<List<Raw>> readLocked(Proc proc, byte @Nullable [] key) {
    NsSegments ns = refresh(proc.nspace());
    if (ns == null) {
      return Optional.empty();
    }
    return key == null ? walk(ns, proc.rank()) : search(ns, proc.rank(), key);
  }

  /**
   * Follows the initial segments and the namespace's entry, mapping segments the server added
   * since the last read; {@code null} if the namespace has no entry.
   */
  private @Nullable NsSegments refresh(String nspace) {
    if (initial.isEmpty()) {
      initial.add(source.open(initialName(0), false));
    }
    // Initial segments: the server moves on to the next one when one is full.
    while (true) {
      Segment last = initial.get(initial.size() - 1);
      if (last.u64(8) != 1) {
        break;
      }
      if (initial.size() >= MAX_INITIAL_SEGMENTS) {
        throw Segment.corrupt(last.name(), "too many initial segments");
      }
      initial.add(source.open(initialName(initial.size()), false));
    }
    byte[] name = nspace.getBytes(StandardCharsets.UTF_8);
    for (Segment seg : initial) {
      long n = seg.u64(0);
      long max = (seg.size() - (long) NS_INFO_BASE) / NS_INFO_SIZE;
      if (n < 0 || n > max) {
        throw Segment.corrupt(seg.name(), "claims " + n + " namespaces, room for " + max);
      }
      for (long i = 0; i < n; i++) {
        long at = NS_INFO_BASE + i * NS_INFO_SIZE;
        if (nameAt(seg, at, name)) {
          return sync(nspace, seg.u64(at + NUM_META_SEG), seg.u64(at + NUM_DATA_SEG), seg);
        }
      }
    }
    return null;
  }

  private static boolean nameAt(Segment seg, long at, byte[] name) {
    if (name.length >= NS_NAME_SIZE) {
      return false;
    }
    byte[] field = seg.copy(at, name.length + 1L);
    return field[name.length] == 0 && Arrays.equals(field, 0, name.length, name, 0, name.length);
  }

  private NsSegments sync(String nspace, long nmeta, long ndata, Segment where) {
    if (nmeta < 1 || nmeta > MAX_NS_SEGMENTS || ndata < 1 || ndata > MAX_NS_SEGMENTS) {
      throw Segment.corrupt(
          where.name(), nspace + " has " + nmeta + " meta and " + ndata + " data segments");
    }
    NsSegments ns = namespaces.get(nspace); // not computeIfAbsent's lambda: a first init
    if (ns == null) {
      ns = new NsSegments();
      namespaces.put(nspace, ns);
    }
    while (ns.meta.size() < nmeta) {
      ns.meta.add(openSized("smseg-" + nspace + "-" + ns.meta.size(), ns.meta));
    }
    while (ns.data.size() < ndata) {
      ns.data.add(openSized("smdataseg-" + nspace + "-" + ns.data.size(), ns.data));
    }
    return ns;
  }

  /** Maps a segment, which must have the size of the earlier ones of its kind. */
  private Segment openSized(String file, List<Segment> earlier) {
    Segment s = source.open(file, false);
    int minimum = 8 + RANK_META_SIZE;
    if (s.size() < minimum || (!earlier.isEmpty() && s.size() != earlier.get(0).size())) {
      s.close();
      throw Segment.corrupt(file, "has " + s.size() + " bytes, unlike its siblings");
    }
    return s;
  }

  /** The meta entry of {@code rank} (offset, count), or {@code null} when it has no data. */
  private long @Nullable [] meta(NsSegments ns, int rank) {
    Segment first = ns.meta.get(0);
    long perSegment = (first.size() - 8L) / RANK_META_SIZE;
    long linear = first.u64(0);
    if (linear != 0) {
      // SM_USE_LINEAR_SEARCH: entries appended, counted in each segment's first word. libpmix
      // 4.2.2's own search compares with rank + 1 (docs/gds.md); we compare with the rank.
      long stored = rank == Proc.RANK_WILDCARD ? Proc.RANK_WILDCARD & 0xffffffffL : rank;
      for (Segment seg : ns.meta) {
        long n = seg.u64(0);
        if (n < 0 || n > perSegment) {
          throw Segment.corrupt(seg.name(), "claims " + n + " entries");
        }
        for (long i = 0; i < n; i++) {
          long at = 8 + i * RANK_META_SIZE;
          if (seg.u64(at) == stored) {
            return entry(seg, at);
          }
        }
      }
      return null;
    }
    // Direct index: entry rank + 1, WILDCARD at 0.
    long index = rank == Proc.RANK_WILDCARD ? 0 : Integer.toUnsignedLong(rank) + 1;
    long id = index / perSegment;
    if (id >= ns.meta.size()) {
      return null;
    }
    Segment seg = ns.meta.get((int) id);
    return entry(seg, 8 + (index % perSegment) * RANK_META_SIZE);
  }

  private static long @Nullable [] entry(Segment seg, long at) {
    long offset = seg.u64(at + 8);
    long count = seg.u64(at + 16);
    if (offset == 0) {
      return null;
    }
    if (count < 0) {
      throw Segment.corrupt(seg.name(), "entry at " + at + " counts " + count + " keys");
    }
    return new long[] {offset, count};
  }

  /**
   * The first valid record of {@code key} in the chain of {@code rank}, found through the chain's
   * {@link ChainIndex}: a key found before is read where it lies, another one by reading only the
   * records written since the last search (a client getting a fresh key of a peer that has
   * committed hundreds of times reads one record, not the whole chain). The same answer as
   * {@link #walk}.
   */
  private Optional<List<Raw>> search(NsSegments ns, int rank, byte[] key) {
    long[] m = meta(ns, rank);
    if (m == null) {
      ns.chains.remove(rank);
      return Optional.empty();
    }
    ChainIndex chain = ns.chains.get(rank);
    if (chain == null || chain.start() != m[0]) {
      chain = new ChainIndex(m[0], records);
      ns.chains.put(rank, chain);
    }
    long dataSize = ns.data.get(0).size();
    long found;
    try {
      found = chain.find(ns.data, m[1], key);
      if (found == ChainIndex.STALE) {
        // A new index has read nothing that could have changed: it is never stale.
        chain = new ChainIndex(m[0], records);
        ns.chains.put(rank, chain);
        found = chain.find(ns.data, m[1], key);
      }
    } catch (RuntimeException e) {
      ns.chains.remove(rank);
      throw e;
    }
    if (found < 0) {
      return Optional.of(List.of());
    }
    Segment seg = ns.data.get((int) (found / dataSize));
    DstoreFormat.Item r = records.parse(seg, found % dataSize);
    return Optional.of(
        List.of(
            new Raw(
                new String(r.key(), StandardCharsets.UTF_8),
                seg.copy(r.dataAt(), r.dataLength()))));
  }

  /** Every record of {@code rank}'s chain, as libpmix's readers walk it (docs/gds.md §3). */
  private Optional<List<Raw>> walk(NsSegments ns, int rank) {
    long[] m = meta(ns, rank);
    if (m == null) {
      return Optional.empty();
    }
    long count = m[1];
    // What is copied out is bounded by the segments too (a chain may loop back over its records).
    long copyBudget = ns.data.get(0).size() * ns.data.size();
    List<Raw> out = new ArrayList<>();
    ChainCursor c = new ChainCursor(ns.data, records, m[0]);
    for (; count > 0; count--) {
      DstoreFormat.Item r = c.next();
      if (r == null) {
        break;
      }
      Segment seg = c.lastSegment();
      copyBudget -= r.dataLength() + r.key().length;
      if (copyBudget < 0) {
        throw Segment.corrupt(seg.name(), "the records of rank " + rank + " repeat");
      }
      out.add(
          new Raw(new String(r.key(), StandardCharsets.UTF_8), seg.copy(r.dataAt(), r.dataLength())));
    }
    return Optional.of(out);
  }

  static String initialName(int id) {
    return "initial-pmix_shared-segment-" + id;
  }

  /** Refuses namespaces that cannot name a segment file (libpmix would build odd paths). */
  static void checkNamespace(String nspace) {
    requireNonNull(nspace, "nspace");
    if (nspace.isEmpty()
        || nspace.indexOf('/') >= 0
        || nspace.indexOf('\0') >= 0
        || nspace.equals(".")
        || nspace.equals("..")
        || nspace.getBytes(StandardCharsets.UTF_8).length > Proc.MAX_NSLEN) {
      throw new PmixException(Status.ERR_BAD_PARAM, "namespace " + nspace + " has no dstore");
    }
  }

  @Override
  public void close() {
    reading.lock(); // after a read in progress
    try {
      closeHeld();
    } finally {
      reading.unlock();
    }
  }

  private void closeHeld() {
    if (closed) {
      return;
    }
    closed = true;
    // Loops, not forEach with a method reference: a last finalize runs this.
    for (NsSegments ns : namespaces.values()) {
      for (Segment s : ns.meta) {
        s.close();
      }
      for (Segment s : ns.data) {
        s.close();
      }
    }
    namespaces.clear();
    for (Segment s : initial) {
      s.close();
    }
    initial.clear();
    lock.close();
    source.close();
  }
}
