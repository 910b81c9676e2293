package io.pmix.common.internal.gds;

import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The server's side of a libpmix 4.2.2 shared-memory store (ds21 or ds12) in one directory
 * (docs/gds.md sections 2 to 5): creates the initial segment, a namespace's ds21 lock segment at
 * its registration, its meta and data segments at its first data, and appends each store of a
 * rank's values to the rank's chain of records under the writer's side of the lock; removes a
 * namespace's files (ds21's lock segment too, which libpmix keeps until the session ends) and
 * finally the directory. The layout is {@link DstoreReader}'s (its constants) and {@link
 * DstoreFormat}'s (the records), so both directions share one description.
 *
 * <p>A key stored again with a value of the same packed size is overwritten in place, otherwise
 * its old record is invalidated and a new one appended, as libpmix does; an unchanged value is not
 * written again. One write (one {@link #store} call) takes the lock once.
 *
 * <p><b>The store never answers older data than the server holds.</b> A write that cannot be made
 * whole leaves its rank <i>hidden</i>: the rank's count in its meta entry is set to 0, so readers
 * (libpmix's and ours) find none of its keys and ask the server, which has them; the rank is not
 * written again. A lock not granted in time (a reader stopped inside a read, or dead inside one:
 * ds12's rwlock, unlike our ds21 mutexes, cannot be taken over from a dead reader, so it is then
 * lost for good) <i>retires</i> the store: the lock is not tried again, and every rank a later
 * write is for is hidden instead, without the lock. Hiding without the lock is one aligned 8-byte
 * store of the count, which libpmix's reader reads once per search: a reader sees the rank whole
 * or not at all.
 *
 * <p>Not thread-safe: one thread at a time owns it (the server's store writer, or its progress
 * thread while the writer is idle, for a write made only when every lock is free: {@link
 * #lockIfFree}), the hand-over ordered by its owner; {@link #retired} may be read from any.
 */
public final class DstoreWriter implements AutoCloseable {
  static final int PAGE = 4096;

  /** libpmix's default segment sizes (docs/gds.md section 2). */
  private static final long DEFAULT_INITIAL_SIZE = PAGE;

  private static final long DEFAULT_META_SIZE = 4L << 20;
  private static final long DEFAULT_DATA_SIZE = 4L << 20;

  private static final System.Logger LOG = LazyLogger.of(DstoreWriter.class);

  /** ds21's lock segment: mutexes one cache line apart. */
  static final long MUTEX_ALIGN = 64;

  /** The rank a meta entry stores for WILDCARD. */
  private static final long WILDCARD_STORED = Proc.RANK_WILDCARD & 0xffffffffL;

  private final GdsKind kind;
  private final Path dir;
  /** How the ds12 lock is named in its failures (made once: every write takes it). */
  private final String rwlockWhat;
  private final WireFormat format;
  private final Duration lockTimeout;
  /** The uid the directory and every file are given (the readers' user), if not this process's. */
  private final OptionalInt owner;
  private final DstoreFormat records;
  private final long initialSize;
  private final long metaSize;
  private final long dataSize;
  private final int extLength;
  private final int extValueOffset;
  private final List<Segment> initial = new ArrayList<>();
  private final Map<String, Ns> namespaces = new LinkedHashMap<>();
  private final @Nullable Segment rwlockSegment;
  /** The address of ds12's rwlock; 0 for ds21. */
  private final long rwlock;
  private boolean closed;
  /** Set once the lock was not granted in time: nothing is written any more, ranks are hidden. */
  private volatile boolean retired;

  /** What is written of one namespace. */
  private static final class Ns {
    final String name;
    /** Its index in the namespace table (segment index * per segment + entry), -1: none yet. */
    int entry = -1;

    final List<Segment> meta = new ArrayList<>();
    final List<Segment> data = new ArrayList<>();
    final Map<Long, Chain> ranks = new HashMap<>();
    @Nullable Segment lockSegment;
    /** Addresses of its mutexes, signal and main alternating. */
    long[] mutexes = new long[0];
    /** What a failure to take its mutexes names (made once: a write takes them all). */
    final String signalWhat;
    final String mainWhat;

    Ns(String name) {
      this.name = name;
      this.signalWhat = "ds21 signal lock of " + name;
      this.mainWhat = "ds21 lock of " + name;
    }
  }

  /** One rank's chain of records. */
  private static final class Chain {
    long head;
    /** Global offset of the extension slot ending the chain; -1 before the first run. */
    long tailExt = -1;

    long count;
    final Map<String, Rec> keys = new HashMap<>();
    /** Its count set to 0 after a write to it failed: it is not written again. */
    boolean hidden;
  }

  /** A valid record: where it starts, where its data starts, and the data (to skip rewrites). */
  @SuppressWarnings("ArrayRecordComponent") // compared with Arrays.equals where needed
  private record Rec(long at, long dataAt, byte[] data) {}

  private DstoreWriter(
      GdsKind kind, Path dir, WireFormat format, Duration lockTimeout, Map<String, String> env,
      OptionalInt owner) {
    this.kind = kind;
    this.dir = dir;
    this.rwlockWhat = "ds12 lock " + dir;
    this.format = format;
    this.lockTimeout = lockTimeout;
    this.owner = owner;
    this.records = kind == GdsKind.DS21 ? DstoreFormat.DS21 : DstoreFormat.DS12;
    // libpmix reads these in every process: a server and its clients must agree.
    this.initialSize = size(env, "INITIAL_SEG_SIZE", DEFAULT_INITIAL_SIZE);
    this.metaSize = size(env, "NS_META_SEG_SIZE", DEFAULT_META_SIZE);
    this.dataSize = size(env, "NS_DATA_SEG_SIZE", DEFAULT_DATA_SIZE);
    this.extLength = records.extension(0).length;
    this.extValueOffset = records.extensionValueOffset();
    initial.add(createSegment(DstoreReader.initialName(0), initialSize));
    if (kind == GdsKind.DS12) {
      Segment s = createSegment("dstore_sm.lock", PAGE);
      this.rwlockSegment = s;
      this.rwlock = PosixLocks.address(s.buffer(), 0);
      WriterNatives.initRwlock(rwlock);
    } else {
      this.rwlockSegment = null;
      this.rwlock = 0;
    }
  }

  /**
   * Creates the store of module {@code kind} in the new directory {@code dir} (mode 0700, files
   * 0600: the clients are the server's user).
   *
   * @param format the buffer type values are packed in (the clients' {@code PMIX_BFROP_BUFFER_TYPE})
   * @param lockTimeout how long one write waits for the readers at most
   * @param env where {@code INITIAL_SEG_SIZE}, {@code NS_META_SEG_SIZE} and {@code
   *     NS_DATA_SEG_SIZE} are read, as libpmix reads them
   * @throws PmixException {@code PMIX_ERR_NOT_AVAILABLE} if the files cannot be made, {@code
   *     PMIX_ERR_NOT_SUPPORTED} if the native locks are not reachable
   */
  public static DstoreWriter create(
      GdsKind kind, Path dir, WireFormat format, Duration lockTimeout, Map<String, String> env) {
    return create(kind, dir, format, lockTimeout, env, OptionalInt.empty());
  }

  /**
   * Creates the store as {@link #create(GdsKind, Path, WireFormat, Duration, Map)}, with the
   * directory and every file it ever makes owned by the uid {@code owner} (as libpmix does with
   * {@code PMIX_USERID}: a server running as root for another user's job); same modes, so only
   * that user (and root) can read them. Changing the owner needs the privilege to do so.
   *
   * @throws PmixException {@code PMIX_ERR_NO_PERMISSIONS} if the owner cannot be changed
   */
  public static DstoreWriter create(
      GdsKind kind, Path dir, WireFormat format, Duration lockTimeout, Map<String, String> env,
      OptionalInt owner) {
    if (!kind.isDstore()) {
      throw new IllegalArgumentException(kind + " is not a shared-memory store");
    }
    requireNonNull(dir, "dir");
    requireNonNull(owner, "owner");
    try {
      Files.createDirectory(dir);
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    } catch (IOException e) {
      throw new PmixException(
          Status.ERR_NOT_AVAILABLE, "cannot create the store directory " + dir + ": " + e, e);
    }
    try {
      chown(dir, owner);
      return new DstoreWriter(
          kind, dir, requireNonNull(format, "format"), requireNonNull(lockTimeout, "lockTimeout"),
          env, owner);
    } catch (RuntimeException e) {
      deleteTree(dir);
      throw e;
    }
  }

  /** Gives {@code p} to {@code owner} (the group stays), if one is set. */
  private static void chown(Path p, OptionalInt owner) {
    if (owner.isEmpty()) {
      return;
    }
    try {
      Files.setAttribute(p, "unix:uid", owner.getAsInt());
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      throw new PmixException(
          Status.ERR_NO_PERMISSIONS,
          "cannot give " + p + " to uid " + Integer.toUnsignedString(owner.getAsInt()) + ": " + e,
          e);
    }
  }

  /** The uid the store's files belong to, if not this process's. */
  public OptionalInt owner() {
    return owner;
  }

  private static long size(Map<String, String> env, String name, long dflt) {
    String v = env.get(name);
    if (v == null || v.isEmpty()) {
      return dflt;
    }
    try {
      long n = Long.parseLong(v.trim());
      return n < PAGE || n > Integer.MAX_VALUE ? dflt : n;
    } catch (NumberFormatException e) {
      return dflt;
    }
  }

  /** The module written. */
  public GdsKind kind() {
    return kind;
  }

  /** The directory (the base path a client is given). */
  public Path directory() {
    return dir;
  }

  /** The namespaces that have files here. */
  public List<String> namespaces() {
    return List.copyOf(namespaces.keySet());
  }

  /**
   * A namespace was registered with {@code localProcs} processes on this node: ds21 makes its lock
   * segment (one mutex pair per local process, as libpmix) so that its clients can attach; a
   * namespace that has one keeps it. ds12 has nothing per namespace yet.
   */
  public void addNamespace(String nspace, int localProcs) {
    checkOpen();
    DstoreReader.checkNamespace(nspace);
    Ns ns = namespaces.computeIfAbsent(nspace, Ns::new);
    if (kind != GdsKind.DS21 || ns.lockSegment != null) {
      return;
    }
    int n = Math.max(1, localProcs);
    long mutexOffs = roundUp(LockSlots.IN_USE_OFFSET + 4L * n, MUTEX_ALIGN);
    long size = roundUp(mutexOffs + MUTEX_ALIGN * 2L * n, PAGE);
    Segment seg = createSegment("smlockseg-" + nspace, size);
    try {
      seg.putU64(Ds21Lock.SEG_SIZE, size);
      seg.putI32(Ds21Lock.NUM_LOCKS, n);
      seg.putU64(Ds21Lock.ALIGN_SIZE, MUTEX_ALIGN);
      seg.putU64(Ds21Lock.MUTEX_OFFS, mutexOffs);
      long[] m = new long[2 * n];
      for (int i = 0; i < m.length; i++) {
        m[i] = PosixLocks.address(seg.buffer(), mutexOffs + MUTEX_ALIGN * i);
        WriterNatives.initMutex(m[i]);
      }
      ns.lockSegment = seg;
      ns.mutexes = m;
    } catch (RuntimeException e) {
      seg.close();
      deleteQuietly(dir.resolve(seg.name()));
      throw e;
    }
  }

  /**
   * Appends {@code values} (key to value, in order) to the records of {@code rank} of {@code
   * nspace} ({@link Proc#RANK_WILDCARD} for job-level data) under the writer lock. Keys a record
   * cannot hold (longer than 511 bytes, or ds12's marker names) are left out: readers then ask the
   * server.
   *
   * <p>Values larger than a data segment are left out too, and the key's older record, if any, is
   * invalidated. After a failure, or on a {@linkplain #retired retired} store, the rank is hidden
   * instead (see the class comment).
   *
   * @throws PmixException {@code PMIX_ERR_TIMEOUT} if the readers' locks were not granted in time
   *     (nothing is written then, the store is retired), {@code PMIX_ERR_NOT_AVAILABLE} if a
   *     segment cannot be made, {@code PMIX_ERR_BAD_PARAM} for a namespace name a store cannot
   *     hold
   */
  public void store(String nspace, int rank, Map<String, Value> values) {
    storeAll(
        List.of(new Write(nspace, rank, values)),
        (w, e) -> {
          throw e;
        });
  }

  /**
   * One {@link #store} of a {@link #storeAll} batch. A server writes each batch to every store it
   * serves (ds21 and ds12 alike): the packed form of each value is kept with the write, so the
   * stores of one format pack it once (a fresh server packs interpreted: a 1 KiB fence
   * contribution cost each store ~20 µs). Used by one writer thread at a time.
   */
  public static final class Write {
    private final String nspace;
    private final int rank;
    private final Map<String, Value> values;
    private @Nullable WireFormat packedFormat;
    private @Nullable Map<String, byte[]> packed;

    /** The values (key to value, in order) of {@code rank} of {@code nspace}; not copied. */
    public Write(String nspace, int rank, Map<String, Value> values) {
      this.nspace = requireNonNull(nspace, "nspace");
      this.rank = rank;
      this.values = requireNonNull(values, "values");
    }

    /** The namespace written. */
    public String nspace() {
      return nspace;
    }

    /** The rank written, {@link Proc#RANK_WILDCARD} for job-level data. */
    public int rank() {
      return rank;
    }

    /** The values, key to value, in order. */
    public Map<String, Value> values() {
      return values;
    }

    /** The packed bytes of {@code key}'s value in {@code format}, packed at the first call. */
    byte[] packed(String key, WireFormat format) {
      Map<String, byte[]> memo = packed;
      if (memo == null || !format.equals(packedFormat)) {
        memo = new HashMap<>();
        packed = memo;
        packedFormat = format;
      }
      byte[] b = memo.get(key);
      if (b == null) {
        b = pack(requireNonNull(values.get(key), key), format);
        memo.put(key, b);
      }
      return b;
    }

    @Override
    public String toString() {
      return "Write[" + nspace + ":" + rank + ", " + values.keySet() + "]";
    }
  }

  /**
   * {@link #store}s {@code writes} in order under one taking of the writer lock (a ds21 lock is
   * one mutex pair per local process of every namespace: taking it once per commit of a
   * 1,024-process job was most of that job's fence). A write that fails (as for {@link #store})
   * is given to {@code failed}, its rank hidden, and the others go on; a lock not granted in time
   * fails them all and retires the store. On a retired store every write hides its rank, and
   * none is given to {@code failed} (the retirement was).
   */
  public void storeAll(List<Write> writes, BiConsumer<Write, RuntimeException> failed) {
    checkOpen();
    if (retired) {
      for (Write w : writes) {
        hide(w.nspace(), w.rank());
      }
      return;
    }
    Packed p = pack(writes, failed);
    if (p.ready.isEmpty()) {
      return;
    }
    Held held;
    try {
      held = lock(PosixLocks.deadline(lockTimeout));
    } catch (RuntimeException e) {
      retire(e);
      for (Write w : p.ready) {
        hide(w.nspace(), w.rank());
        failed.accept(w, e);
      }
      return;
    }
    try {
      append(p, failed);
    } finally {
      unlock(held);
    }
  }

  /**
   * The writer lock if every lock of it is free now, else null, having waited for nothing and
   * released what it took (nor is the store retired for it: {@link #storeAll} then takes the
   * lock as usual); null on a retired store too. A timed lock whose deadline has passed takes a
   * free mutex (POSIX), so this is one try of each.
   */
  public @Nullable Held lockIfFree() {
    checkOpen();
    if (retired) {
      return null;
    }
    try {
      return lock(PosixLocks.deadline(Duration.ZERO));
    } catch (RuntimeException e) {
      return null; // held by a reader (ERR_TIMEOUT), or failing: storeAll decides
    }
  }

  /**
   * As {@link #storeAll}, under {@code held} (from {@link #lockIfFree}), which is released here.
   */
  public void storeAll(
      List<Write> writes, BiConsumer<Write, RuntimeException> failed, Held held) {
    try {
      checkOpen();
      append(pack(writes, failed), failed);
    } finally {
      unlock(held);
    }
  }

  /** The writes that have something to store, each with its namespace and packed records. */
  private static final class Packed {
    final List<Write> ready;
    final List<Ns> targets;
    final List<List<Map.Entry<byte[], byte[]>>> records;

    Packed(int n) {
      ready = new ArrayList<>(n);
      targets = new ArrayList<>(n);
      records = new ArrayList<>(n);
    }
  }

  private Packed pack(List<Write> writes, BiConsumer<Write, RuntimeException> failed) {
    Packed p = new Packed(writes.size());
    for (Write w : writes) {
      try {
        List<Map.Entry<byte[], byte[]>> packed = packAll(w);
        if (!packed.isEmpty()) {
          p.targets.add(namespaces.computeIfAbsent(w.nspace(), Ns::new));
          p.records.add(packed);
          p.ready.add(w);
        }
      } catch (RuntimeException e) {
        failed.accept(w, e);
      }
    }
    return p;
  }

  /** Appends what {@link #pack} made; the writer lock held. */
  private void append(Packed p, BiConsumer<Write, RuntimeException> failed) {
    for (int i = 0; i < p.ready.size(); i++) {
      Write w = p.ready.get(i);
      Ns ns = p.targets.get(i);
      long stored = stored(w.rank());
      Chain chain = ns.ranks.get(stored);
      if (chain != null && chain.hidden) {
        continue;
      }
      try {
        ensureEntry(ns);
        append(ns, stored, p.records.get(i));
      } catch (RuntimeException e) {
        hide(w.nspace(), w.rank());
        failed.accept(w, e);
      }
    }
  }

  private static long stored(int rank) {
    return rank == Proc.RANK_WILDCARD ? WILDCARD_STORED : Integer.toUnsignedLong(rank);
  }

  /**
   * Whether the store was retired: its lock was not granted in time once, so it is no longer
   * written (ranks given to it are hidden) and no process should be told to read it. Thread-safe.
   */
  public boolean retired() {
    return retired;
  }

  private void retire(RuntimeException why) {
    if (!retired) {
      retired = true;
      LOG.log(
          System.Logger.Level.WARNING,
          "gds {0} store {1} retired: {2} (a reader stopped or died holding its lock); nothing is"
              + " written to it any more, its readers ask the server for what changes",
          kind.libpmixName(), dir, why.getMessage());
    }
  }

  /**
   * Hides {@code rank} of {@code nspace} from the store's readers for good: its count in its meta
   * entry becomes 0 (one aligned 8-byte store, safe without the lock: libpmix's reader reads the
   * count once per search, so it sees the rank's records whole or not at all), and it is not
   * written again. Its readers then ask the server. A rank with no meta entry yet is only marked.
   */
  private void hide(String nspace, int rank) {
    Ns ns = namespaces.get(nspace);
    if (ns == null) {
      return;
    }
    long stored = stored(rank);
    Chain chain = ns.ranks.computeIfAbsent(stored, r -> new Chain());
    if (chain.hidden) {
      return;
    }
    chain.hidden = true;
    MetaEntry m = metaEntry(ns, stored);
    if (m != null && m.seg().u64(m.at() + 16) != 0) {
      m.seg().putU64(m.at() + 16, 0);
    }
  }

  private List<Map.Entry<byte[], byte[]>> packAll(Write w) {
    DstoreReader.checkNamespace(w.nspace());
    Map<String, Value> values = w.values();
    List<Map.Entry<byte[], byte[]>> packed = new ArrayList<>(values.size());
    for (String k : values.keySet()) {
      byte[] key = k.getBytes(StandardCharsets.UTF_8);
      if (key.length == 0
          || key.length > DstoreFormat.MAX_KEY_BYTES
          || (kind == GdsKind.DS12
              && (DstoreFormat.matches(key, DstoreFormat.INVALIDATED)
                  || DstoreFormat.matches(key, DstoreFormat.EXTENSION_SLOT)))) {
        continue;
      }
      packed.add(Map.entry(key, w.packed(k, format)));
    }
    return packed;
  }

  private static byte[] pack(Value v, WireFormat format) {
    // An array, not a ByteBuf: a fresh server runs this interpreted for every stored value. Sized
    // for a blob at once (a fence's 1 KiB contribution would otherwise be copied as it grows).
    WireBuffer buf = WireBuffer.allocate(v instanceof Value.Bytes b ? b.length() + 32 : 64);
    new PmixWriter(buf, format).packAsValue(v);
    return buf.toByteArray();
  }

  private void append(Ns ns, long rank, List<Map.Entry<byte[], byte[]>> values) {
    Chain chain = ns.ranks.computeIfAbsent(rank, r -> new Chain());
    List<Map.Entry<String, byte[]>> fresh = new ArrayList<>();
    List<byte[]> encoded = new ArrayList<>();
    for (Map.Entry<byte[], byte[]> kv : values) {
      String key = new String(kv.getKey(), StandardCharsets.UTF_8);
      byte[] data = kv.getValue();
      Rec old = chain.keys.get(key);
      if (old != null && Arrays.equals(old.data(), data)) {
        continue;
      }
      if (old != null && old.data().length == data.length) {
        dataAt(ns, old.dataAt()).put(local(old.dataAt()), data);
        chain.keys.put(key, new Rec(old.at(), old.dataAt(), data));
        continue;
      }
      if (old != null) {
        records.invalidate(dataAt(ns, old.at()), local(old.at()));
        chain.keys.remove(key);
        chain.count--;
      }
      byte[] rec = records.encode(kv.getKey(), data, false);
      if (rec.length + extLength + 8L > dataSize) {
        // Left out, as a key a record cannot hold: its readers ask the server, which has it (its
        // older value, if any, was invalidated above and is not found either).
        continue;
      }
      fresh.add(Map.entry(key, data));
      encoded.add(rec);
    }
    if (fresh.isEmpty()) {
      writeMeta(ns, rank, chain);
      return;
    }
    long start = -1;
    for (int i = 0; i < encoded.size(); i++) {
      byte[] rec = encoded.get(i);
      long at = place(ns, rec.length, start >= 0, false);
      if (start < 0) {
        start = at;
      }
      dataAt(ns, at).put(local(at), rec);
      long dataStart = at + rec.length - fresh.get(i).getValue().length;
      chain.keys.put(fresh.get(i).getKey(), new Rec(at, dataStart, fresh.get(i).getValue()));
    }
    long tail = place(ns, extLength, true, true);
    dataAt(ns, tail).put(local(tail), records.extension(0));
    if (chain.tailExt >= 0) {
      linkExtension(ns, chain.tailExt, start);
    } else {
      chain.head = start;
    }
    chain.tailExt = tail;
    chain.count += fresh.size();
    writeMeta(ns, rank, chain);
  }

  /**
   * Reserves {@code length} bytes in the namespace's last data segment, leaving room for an
   * extension slot after them unless they are the run's closing slot ({@code tail}); when they do not fit, a new segment is made and, inside a run,
   * linked from an extension slot in the old one. Returns the global offset reserved.
   */
  private long place(Ns ns, int length, boolean inRun, boolean tail) {
    Segment last = ns.data.get(ns.data.size() - 1);
    long free = last.u64(0);
    if (free + length + (tail ? 0 : extLength) > dataSize) {
      Segment next = newDataSegment(ns);
      long nextStart = (ns.data.size() - 1) * dataSize + 8;
      if (inRun) {
        byte[] link = records.extension(nextStart);
        last.put(free, link);
        last.putU64(0, free + link.length);
      }
      last = next;
      free = 8;
    }
    last.putU64(0, free + length);
    return (ns.data.size() - 1) * dataSize + free;
  }

  private void linkExtension(Ns ns, long ext, long target) {
    dataAt(ns, ext).putU64(local(ext) + extValueOffset, target);
  }

  private Segment dataAt(Ns ns, long global) {
    return ns.data.get((int) (global / dataSize));
  }

  private long local(long global) {
    return global % dataSize;
  }

  /** Where a rank's meta entry lies. */
  private record MetaEntry(Segment seg, long at) {}

  /** The rank's meta entry, or null when its meta segment is not made yet. */
  private @Nullable MetaEntry metaEntry(Ns ns, long rank) {
    long index = rank == WILDCARD_STORED ? 0 : rank + 1;
    long perSegment = (metaSize - 8) / DstoreReader.RANK_META_SIZE;
    int id = (int) (index / perSegment);
    return id < ns.meta.size()
        ? new MetaEntry(ns.meta.get(id), 8 + (index % perSegment) * DstoreReader.RANK_META_SIZE)
        : null;
  }

  private void writeMeta(Ns ns, long rank, Chain chain) {
    long index = rank == WILDCARD_STORED ? 0 : rank + 1;
    long perSegment = (metaSize - 8) / DstoreReader.RANK_META_SIZE;
    int id = (int) (index / perSegment);
    while (ns.meta.size() <= id) {
      ns.meta.add(createSegment("smseg-" + ns.name + "-" + ns.meta.size(), metaSize));
      tableEntry(ns).seg().putU64(tableEntry(ns).at() + DstoreReader.NUM_META_SEG, ns.meta.size());
    }
    Segment seg = ns.meta.get(id);
    long at = 8 + (index % perSegment) * DstoreReader.RANK_META_SIZE;
    seg.putU64(at, rank);
    seg.putU64(at + 8, chain.head);
    seg.putU64(at + 16, chain.count);
  }

  @com.google.errorprone.annotations.CanIgnoreReturnValue
  private Segment newDataSegment(Ns ns) {
    Segment s = createSegment("smdataseg-" + ns.name + "-" + ns.data.size(), dataSize);
    s.putU64(0, 8);
    ns.data.add(s);
    if (ns.entry >= 0) {
      tableEntry(ns).seg().putU64(tableEntry(ns).at() + DstoreReader.NUM_DATA_SEG, ns.data.size());
    }
    return s;
  }

  /** Where a namespace's table entry lies. */
  private record Where(Segment seg, long at) {}

  private long perInitial() {
    return (initialSize - DstoreReader.NS_INFO_BASE) / DstoreReader.NS_INFO_SIZE;
  }

  private Where tableEntry(Ns ns) {
    long per = perInitial();
    return new Where(
        initial.get((int) (ns.entry / per)),
        DstoreReader.NS_INFO_BASE + (ns.entry % per) * DstoreReader.NS_INFO_SIZE);
  }

  /** Gives the namespace its first meta and data segments and its entry in the table. */
  private void ensureEntry(Ns ns) {
    if (ns.entry >= 0) {
      return;
    }
    if (ns.meta.isEmpty()) {
      ns.meta.add(createSegment("smseg-" + ns.name + "-0", metaSize));
    }
    if (ns.data.isEmpty()) {
      newDataSegment(ns);
    }
    long per = perInitial();
    int slot = -1;
    // A slot a removed namespace left (its name zeroed) first, else the next one.
    for (int s = 0; s < initial.size() && slot < 0; s++) {
      Segment seg = initial.get(s);
      long n = seg.u64(0);
      for (long i = 0; i < n; i++) {
        if (seg.u8(DstoreReader.NS_INFO_BASE + i * DstoreReader.NS_INFO_SIZE) == 0) {
          slot = (int) (s * per + i);
          break;
        }
      }
    }
    if (slot < 0) {
      Segment last = initial.get(initial.size() - 1);
      long n = last.u64(0);
      if (n >= per) {
        last.putU64(8, 1);
        last = createSegment(DstoreReader.initialName(initial.size()), initialSize);
        initial.add(last);
        n = 0;
      }
      slot = (int) ((initial.size() - 1) * per + n);
      last.putU64(0, n + 1);
    }
    ns.entry = slot;
    Where w = tableEntry(ns);
    byte[] name = Arrays.copyOf(ns.name.getBytes(StandardCharsets.UTF_8), DstoreReader.NS_NAME_SIZE);
    w.seg().put(w.at(), name);
    w.seg().put(w.at() + DstoreReader.NS_NAME_SIZE, new byte[16]); // tbl_idx, track_idx
    w.seg().putU64(w.at() + DstoreReader.NUM_META_SEG, ns.meta.size());
    w.seg().putU64(w.at() + DstoreReader.NUM_DATA_SEG, ns.data.size());
  }

  /**
   * Removes every file of {@code nspace} (meta, data and ds21 lock segments) and its table entry
   * (its name zeroed, the slot reused by a later namespace). Idempotent.
   */
  public void removeNamespace(String nspace) {
    checkOpen();
    Ns ns = namespaces.get(nspace);
    if (ns == null) {
      return;
    }
    if (ns.entry >= 0) {
      Where w = tableEntry(ns);
      Held held = null;
      if (!retired) {
        try {
          held = lock(PosixLocks.deadline(lockTimeout));
        } catch (RuntimeException e) {
          retire(e);
        }
      }
      if (held == null) {
        // Without the lock, the name's first byte only (one store): a reader sees the entry
        // named or not at all.
        w.seg().put(w.at(), new byte[1]);
      } else {
        try {
          w.seg().put(w.at(), new byte[DstoreReader.NS_INFO_SIZE]);
        } finally {
          unlock(held);
        }
      }
    }
    namespaces.remove(nspace);
    release(ns);
  }

  private void release(Ns ns) {
    for (Segment s : ns.meta) {
      s.close();
      deleteQuietly(dir.resolve(s.name()));
    }
    for (Segment s : ns.data) {
      s.close();
      deleteQuietly(dir.resolve(s.name()));
    }
    Segment lock = ns.lockSegment;
    if (lock != null) {
      lock.close();
      deleteQuietly(dir.resolve(lock.name()));
    }
  }

  /**
   * The writer's side of the lock: ds21 takes every namespace's signal mutexes, then every main
   * mutex, so new readers stop and current ones are waited for; ds12 the directory's rwlock for
   * writing. Returns what is held, to release in reverse.
   */
  private Held lock(long deadline) {
    int locks = 1;
    for (Ns ns : namespaces.values()) {
      locks += ns.mutexes.length;
    }
    // Sized at once: grown by doubling, a 1,024-process job's batches allocated ~8 KiB each.
    Held held = new Held(locks);
    try {
      if (rwlock != 0) {
        WriterNatives.writeLock(rwlock, deadline, rwlockWhat);
        held.add(rwlock);
        return held;
      }
      for (Ns ns : namespaces.values()) {
        for (int i = 0; i < ns.mutexes.length; i += 2) {
          tookOver(WriterNatives.lockMutex(ns.mutexes[i], deadline, ns.signalWhat), ns, i);
          held.add(ns.mutexes[i]);
        }
      }
      for (Ns ns : namespaces.values()) {
        for (int i = 1; i < ns.mutexes.length; i += 2) {
          tookOver(WriterNatives.lockMutex(ns.mutexes[i], deadline, ns.mainWhat), ns, i);
          held.add(ns.mutexes[i]);
        }
      }
      return held;
    } catch (RuntimeException e) {
      unlock(held);
      throw e;
    }
  }

  private static void tookOver(boolean ownerDied, Ns ns, int mutex) {
    if (ownerDied) {
      LOG.log(
          System.Logger.Level.INFO,
          "ds21: the reader of {0} slot {1} died inside a read; its lock is taken over",
          ns.name, mutex / 2);
    }
  }

  /** Releases a lock {@link #lockIfFree} took, when it is not given to {@link #storeAll}. */
  public void unlock(Held held) {
    for (int i = held.count - 1; i >= 0; i--) {
      if (rwlock != 0) {
        WriterNatives.unlockRwlock(held.at[i], rwlockWhat);
      } else {
        WriterNatives.unlockMutex(held.at[i], "ds21 lock");
      }
    }
  }

  /** The addresses of the locks a write holds, in the order taken ({@link #lockIfFree}). */
  public static final class Held {
    private long[] at;
    private int count;

    private Held(int capacity) {
      at = new long[Math.max(1, capacity)];
    }

    private void add(long lock) {
      if (count == at.length) {
        at = Arrays.copyOf(at, 2 * count);
      }
      at[count++] = lock;
    }
  }

  private Segment createSegment(String name, long size) {
    Path p = dir.resolve(name);
    try (FileChannel ch =
        FileChannel.open(
            p,
            Stream.of(
                    StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE)
                .collect(java.util.stream.Collectors.toSet()),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
      // Zeroed to its full size, as libpmix's ftruncate; the mapping outlives the channel.
      ch.truncate(0);
      ch.write(java.nio.ByteBuffer.allocate(1), size - 1);
      Segment m = Segment.map(name, ch, FileChannel.MapMode.READ_WRITE, size);
      try {
        chown(p, owner);
      } catch (RuntimeException e) {
        m.close();
        throw e;
      }
      return m;
    } catch (PmixException e) {
      deleteQuietly(p);
      throw e;
    } catch (IOException e) {
      deleteQuietly(p);
      throw new PmixException(
          Status.ERR_NOT_AVAILABLE, "cannot create gds segment " + p + ": " + e.getMessage(), e);
    }
  }

  private static long roundUp(long n, long unit) {
    return (n + unit - 1) / unit * unit;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("store " + dir + " is closed");
    }
  }

  /** Unmaps everything and removes the directory with every file in it; idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (Ns ns : namespaces.values()) {
      release(ns);
    }
    namespaces.clear();
    initial.forEach(Segment::close);
    initial.clear();
    if (rwlockSegment != null) {
      rwlockSegment.close();
    }
    deleteTree(dir);
  }

  /** Removes {@code dir} and everything in it, as far as it can. */
  public static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(DstoreWriter::deleteQuietly);
    } catch (IOException e) {
      // Gone already, or unreadable: what can be removed was.
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      // Left behind: the stale-directory cleanup of a later server removes it.
    }
  }
}
