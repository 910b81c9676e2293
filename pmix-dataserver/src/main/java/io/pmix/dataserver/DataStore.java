package io.pmix.dataserver;

import static java.util.Objects.requireNonNull;

import com.google.common.collect.ImmutableList;
import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.dataserver.internal.Access;
import io.pmix.dataserver.internal.Directives;
import io.pmix.dataserver.internal.Publication;
import io.pmix.dataserver.internal.Ranges;
import io.pmix.dataserver.internal.Retention;
import io.pmix.dataserver.internal.Retention.Horizon;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The publish/lookup datastore: the rules of the spec's "Publishing and looking up data" as plain
 * logic, with time from an injectable clock.
 *
 * <h2>The rules</h2>
 *
 * <ul>
 *   <li><b>Visibility.</b> A lookup finds an item only if the publisher's range contains the
 *       requester, the requester's search range contains the publisher, and the publisher's
 *       access permissions admit the requester. Ranges are sets of processes anchored at a caller
 *       (see {@link Identity}): SESSION (the default both ways) is the caller's session, NAMESPACE
 *       its job, LOCAL the processes behind the same server, PROC_LOCAL the caller alone, GLOBAL
 *       everybody, and a publisher's CUSTOM range is its accessor list. A publisher that names no
 *       accessors admits only its own user (uid, and gid where known). A lookup that found
 *       nothing, but was refused some key that passed both ranges, gets {@code
 *       PMIX_ERR_NO_PERMISSIONS} rather than {@code PMIX_ERR_NOT_FOUND}. When several visible
 *       items hold a key, the earliest publication answers.
 *   <li><b>Duplicates.</b> A publish of a key that an item already holds on the same set of
 *       processes (same range word, and the two publishers anchor the same set) fails with {@code
 *       PMIX_ERR_DUPLICATE_KEY} and stores nothing, unless the two are invisible to each other:
 *       different users neither of whom may read the other's publication.
 *   <li><b>Ownership.</b> An item belongs to the user that published it (uid, and gid where both
 *       are known), not to the process. Only the owner removes it; an unpublish by anybody else
 *       succeeds and removes nothing. Reading rights and ownership are independent.
 *   <li><b>Replace.</b> {@value #REPLACE_KEY} lets a publish take back the caller's own user's
 *       colliding keys (only those keys; the rest of their items stay). A collision with another
 *       user's item is a duplicate whether or not it is given.
 *   <li><b>Lifetimes.</b> PROC, APP, NSPACE (the default), SESSION items go when {@link
 *       #procEnded}, {@link #appEnded}, {@link #namespaceEnded} or {@link #sessionEnded} says
 *       their lifetime ended; FIRST_READ goes with the lookup that returns it; INDEF when
 *       unpublished. An unpublish naming no keys removes everything the calling process
 *       published, whatever its persistence.
 *   <li><b>Bounds.</b> INDEF and unread FIRST_READ items are removed once idle for the idle
 *       timeout (idle: not published or returned by a lookup since). Each uid may hold at most the
 *       cap in bytes ({@link io.pmix.dataserver.internal.Sizes}); a publish that would exceed it
 *       evicts that uid's own least recently used items (never another user's), and a publish
 *       larger than the whole cap fails with {@code PMIX_ERR_OUT_OF_RESOURCE} and evicts nothing.
 *       The first eviction for a uid logs one warning naming the limit and its parameter. What
 *       expired or was evicted reads as {@code PMIX_ERR_NOT_FOUND}.
 *   <li><b>Waiting lookups.</b> With {@code PMIX_WAIT}, a lookup that cannot be answered yet
 *       waits until publishes let it find the keys it waits for, until its {@code PMIX_TIMEOUT}
 *       (seconds) passes ({@code PMIX_ERR_TIMEOUT}), until it is cancelled, or until its
 *       requester's lifetime ends ({@code PMIX_ERR_LOST_CONNECTION}). It completes exactly once.
 * </ul>
 *
 * <h2>Threads</h2>
 *
 * Not thread-safe, by design: the store is single-threaded logic and its callers serialize access
 * (a PMIx server calls it from one executor, {@link DataServer} from its event loop). Lookup
 * completions run on the calling thread, after the call's state changes are complete, and may call
 * back into the store. The store schedules nothing itself: the owner calls {@link #advance()} at
 * the time {@link #untilNextDeadline()} says (every other call also catches up on what is due, so
 * an expired item is never returned even if that call is late).
 */
public final class DataStore {
  /** PRRTE's directive for republishing over one's own earlier publication. */
  public static final String REPLACE_KEY = Directives.REPLACE;

  private static final Comparator<Waiter> BY_DEADLINE = new ByDeadline();

  /**
   * Waiters by deadline, then by arrival. A class, not {@code Comparator.comparingLong} and two
   * lambdas: this class is initialized in every pmixrun job, where each call site costs its link
   * (docs/architecture.md, "Start-up of pmixrun").
   */
  private static final class ByDeadline implements Comparator<Waiter> {
    @Override
    public int compare(Waiter a, Waiter b) {
      int c = Long.compare(a.deadline, b.deadline);
      return c != 0 ? c : Long.compare(a.id, b.id);
    }
  }

  private final DataStoreOptions options;
  private final LongSupplier clock;
  private final long origin;
  private final long idleNanos;
  private final long maxBytes;
  private final System.Logger log;

  private long nextId = 1;
  /** Every item, in publication order. */
  private final Map<Long, Publication> items = new LinkedHashMap<>();
  /** The items holding each key, in publication order. */
  private final Map<String, List<Publication>> byKey = new HashMap<>();
  /** The items the idle timeout applies to, least recently used first. */
  private final LinkedHashSet<Publication> idle = new LinkedHashSet<>();
  /** Per uid: bytes charged and items, least recently used first. */
  private final Map<Integer, Usage> usage = new HashMap<>();
  /** The uids already warned about eviction. */
  private final Set<Integer> warned = new HashSet<>();
  /** Waiting lookups, oldest first. */
  private final Map<Long, Waiter> parked = new LinkedHashMap<>();
  /** Waiting lookups with a deadline, earliest first. */
  private final TreeSet<Waiter> deadlines = new TreeSet<>(BY_DEADLINE);
  /** Lookup completions due, run once the current call's changes are complete. */
  private final ArrayDeque<Runnable> completions = new ArrayDeque<>();
  private int depth;

  /** A store with these options; the parameters in them are fixed for its life. */
  public DataStore(DataStoreOptions options) {
    this.options = requireNonNull(options, "options");
    this.clock = options.clock();
    this.origin = clock.getAsLong();
    this.idleNanos = saturatedNanos(options.idleTimeout());
    this.maxBytes = options.maxBytesPerUid();
    this.log = options.logger();
  }

  /** A store with the default options. */
  public DataStore() {
    this(DataStoreOptions.defaults());
  }

  /** The options the store was built with. */
  public DataStoreOptions options() {
    return options;
  }

  /**
   * The attributes a publish acts on: what a server reports among those supported for {@code
   * PMIx_Publish} when asked ({@code PMIX_QUERY_ATTRIBUTE_SUPPORT}), {@value #REPLACE_KEY}
   * included.
   */
  public static List<Value.RegAttr> publishAttributes() {
    return regAttrs(Directives.publishAttributes());
  }

  /** The attributes a lookup acts on. */
  public static List<Value.RegAttr> lookupAttributes() {
    return regAttrs(Directives.lookupAttributes());
  }

  /** The attributes an unpublish acts on. */
  public static List<Value.RegAttr> unpublishAttributes() {
    return regAttrs(Directives.unpublishAttributes());
  }

  // ---------------------------------------------------------------------------------------------
  // Publish

  /**
   * Publishes the data in {@code info}, which mixes data and directives as a PMIx server receives
   * them ({@code pmix.range}, {@code pmix.persist}, {@code pmix.aperms}, {@value #REPLACE_KEY},
   * ...; see {@link io.pmix.dataserver.internal.Directives}).
   *
   * @param publisher the publishing process, as the server authenticated it
   * @return {@code PMIX_SUCCESS}; {@code PMIX_ERR_DUPLICATE_KEY} (nothing stored); {@code
   *     PMIX_ERR_OUT_OF_RESOURCE} (larger than the per-uid cap; nothing stored or evicted); {@code
   *     PMIX_ERR_BAD_PARAM} or {@code PMIX_ERR_NOT_SUPPORTED} for a request the store cannot
   *     honour (nothing stored)
   */
  public Status publish(Identity publisher, List<Info> info) {
    requireNonNull(publisher, "publisher");
    requireNonNull(info, "info");
    enter();
    try {
      long now = catchUp();
      Directives.Publish req;
      try {
        req = Directives.publish(info);
      } catch (PmixException e) {
        log.log(Level.DEBUG, "publish by {0} refused: {1}", publisher, e.getMessage());
        return e.status();
      }
      Publication candidate;
      try {
        candidate =
            new Publication(
                nextId, publisher, req.range(), req.access(), req.retention(), req.data(), now);
      } catch (RuntimeException e) {
        // A value the codec cannot pack (only a Java caller can build one) cannot be charged.
        log.log(Level.DEBUG, "publish by {0} refused: {1}", publisher, e.toString());
        return Status.ERR_BAD_PARAM;
      }

      // Decide completely before changing anything: a refused publish leaves the store as it was.
      List<Publication> mine = new ArrayList<>();
      for (String key : req.data().keySet()) {
        for (Publication p : byKey.getOrDefault(key, List.of())) {
          if (!collides(candidate, p)) {
            continue;
          }
          if (!req.replace() || !Access.sameUser(publisher, p.publisher())) {
            log.log(
                Level.DEBUG,
                "publish by {0} refused: {1} is already published on {2} by {3}",
                publisher,
                key,
                req.range(),
                p.publisher());
            return Status.ERR_DUPLICATE_KEY;
          }
          mine.add(p);
        }
      }
      if (maxBytes > 0 && candidate.charge() > maxBytes) {
        log.log(
            Level.DEBUG,
            "publish by {0} refused: {1} bytes exceed the per-uid limit of {2}",
            publisher,
            candidate.charge(),
            maxBytes);
        return Status.ERR_OUT_OF_RESOURCE;
      }

      for (Publication p : mine) {
        for (String key : req.data().keySet()) {
          removeKey(p, key);
        }
      }
      makeRoom(publisher.uid(), candidate.charge());
      nextId++;
      insert(candidate);
      log.log(Level.DEBUG, "stored {0}", candidate);
      wake(req.data().keySet());
      return Status.SUCCESS;
    } finally {
      exit();
    }
  }

  /**
   * Whether publishing {@code fresh} collides with the stored {@code old}: same range word, same
   * set of processes, and not two different users invisible to each other.
   */
  private static boolean collides(Publication fresh, Publication old) {
    if (fresh.range() != old.range()
        || !Ranges.sameSet(fresh.range(), fresh.publisher(), old.publisher())) {
      return false;
    }
    if (Access.sameUser(fresh.publisher(), old.publisher())) {
      return true;
    }
    return canRead(fresh.publisher(), old) || canRead(old.publisher(), fresh);
  }

  /** The publisher's half of visibility: its range contains the reader and it admits the reader. */
  private static boolean canRead(Identity reader, Publication p) {
    return Ranges.contains(p.range(), p.publisher(), reader)
        && p.access().permits(p.publisher(), reader);
  }

  // ---------------------------------------------------------------------------------------------
  // Lookup

  /** A lookup that may still be waiting. */
  public interface PendingLookup {
    /** Whether the lookup has completed (it completes exactly once). */
    boolean isDone();

    /**
     * Completes a waiting lookup with {@code status} and forgets it. Call it from the thread that
     * uses the store.
     *
     * @return whether the lookup was still waiting
     */
    @CanIgnoreReturnValue
    boolean cancel(Status status);
  }

  private static final PendingLookup DONE =
      new PendingLookup() {
        @Override
        public boolean isDone() {
          return true;
        }

        @Override
        public boolean cancel(Status status) {
          return false;
        }
      };

  /**
   * Looks up {@code keys}. {@code done} receives the result exactly once: before this method
   * returns when the lookup does not wait or can be answered at once, else later, from the call
   * (a publish, {@link #advance()}, a cancel or a lifetime ending) that completes it.
   *
   * @param requester the requesting process, as the server authenticated it
   * @param directives {@code pmix.range} (whose data to search, default SESSION), {@code
   *     pmix.wait} (an int: wait until that many of the keys are found, 0 meaning all; or a
   *     bool), {@code pmix.timeout} (seconds a waiting lookup waits; 0 or absent is for ever)
   * @return a handle to cancel the lookup while it waits
   */
  @CanIgnoreReturnValue
  public PendingLookup lookup(
      Identity requester, List<String> keys, List<Info> directives, Consumer<LookupResult> done) {
    requireNonNull(requester, "requester");
    requireNonNull(keys, "keys");
    requireNonNull(directives, "directives");
    requireNonNull(done, "done");
    enter();
    try {
      long now = catchUp();
      Directives.Lookup req;
      try {
        req = Directives.lookup(keys, directives);
      } catch (PmixException e) {
        log.log(Level.DEBUG, "lookup by {0} refused: {1}", requester, e.getMessage());
        complete(done, LookupResult.of(e.status()));
        return DONE;
      }
      if (!req.waits()) {
        complete(done, collect(requester, req.range(), req.keys(), now, false));
        return DONE;
      }
      if (count(requester, req.range(), req.keys()) >= req.waitFor()) {
        complete(done, collect(requester, req.range(), req.keys(), now, true));
        return DONE;
      }
      if (parked.size() >= options.maxPendingLookups()) {
        complete(done, LookupResult.of(Status.ERR_OUT_OF_RESOURCE));
        return DONE;
      }
      long deadline =
          req.timeoutSeconds() == 0
              ? Long.MAX_VALUE
              : saturatedAdd(now, saturatedNanos(Duration.ofSeconds(req.timeoutSeconds())));
      Waiter w = new Waiter(nextId++, requester, req, deadline, done);
      parked.put(w.id, w);
      if (deadline != Long.MAX_VALUE) {
        deadlines.add(w);
      }
      log.log(Level.DEBUG, "lookup by {0} waits for {1}", requester, req.keys());
      return w;
    } finally {
      exit();
    }
  }

  /** How many of {@code keys} the requester would find now, changing nothing. */
  private int count(Identity requester, DataRange range, List<String> keys) {
    int n = 0;
    for (String key : keys) {
      if (find(requester, range, key).item != null) {
        n++;
      }
    }
    return n;
  }

  /**
   * Answers a lookup from the store: touches every item it returns a key of and consumes
   * FIRST_READ keys.
   *
   * @param waited whether this answers a lookup that waited (which never reports NOT_FOUND or
   *     NO_PERMISSIONS: it was woken because enough keys are there)
   */
  private LookupResult collect(
      Identity requester, DataRange range, List<String> keys, long now, boolean waited) {
    List<Value.PData> found = new ArrayList<>();
    boolean denied = false;
    for (String key : keys) {
      Match m = find(requester, range, key);
      Publication p = m.item;
      if (p == null) {
        denied |= m.denied;
        continue;
      }
      Info datum = requireNonNull(p.data().get(key));
      found.add(new Value.PData(p.publisher().proc(), key, datum.value()));
      touch(p, now);
      if (p.retention() == Retention.FIRST_READ) {
        removeKey(p, key);
      }
    }
    if (found.size() == keys.size()) {
      return new LookupResult(Status.SUCCESS, found);
    }
    if (!found.isEmpty() || waited) {
      return new LookupResult(Status.ERR_PARTIAL_SUCCESS, found);
    }
    return LookupResult.of(denied ? Status.ERR_NO_PERMISSIONS : Status.ERR_NOT_FOUND);
  }

  /** The outcome of searching for one key. */
  private static final class Match {
    @Nullable Publication item;
    boolean denied;
  }

  /** The earliest item holding {@code key} that the requester may see, and whether one refused. */
  private Match find(Identity requester, DataRange range, String key) {
    Match m = new Match();
    for (Publication p : byKey.getOrDefault(key, List.of())) {
      if (!Ranges.contains(p.range(), p.publisher(), requester)
          || !Ranges.contains(range, requester, p.publisher())) {
        continue;
      }
      if (!p.access().permits(p.publisher(), requester)) {
        m.denied = true;
        continue;
      }
      m.item = p;
      return m;
    }
    return m;
  }

  /** Answers the waiting lookups that a publish of {@code keys} may have satisfied, oldest first. */
  private void wake(Set<String> keys) {
    if (parked.isEmpty()) {
      return;
    }
    long now = now();
    for (Waiter w : new ArrayList<>(parked.values())) {
      if (w.request.keys().stream().noneMatch(keys::contains)) {
        continue;
      }
      if (count(w.requester, w.request.range(), w.request.keys()) >= w.request.waitFor()) {
        forget(w);
        w.finish(collect(w.requester, w.request.range(), w.request.keys(), now, true));
      }
    }
  }

  private void forget(Waiter w) {
    parked.remove(w.id);
    deadlines.remove(w);
  }

  /** A parked lookup. */
  private final class Waiter implements PendingLookup {
    final long id;
    final Identity requester;
    final Directives.Lookup request;
    final long deadline;
    private final Consumer<LookupResult> done;
    private boolean finished;

    Waiter(
        long id,
        Identity requester,
        Directives.Lookup request,
        long deadline,
        Consumer<LookupResult> done) {
      this.id = id;
      this.requester = requester;
      this.request = request;
      this.deadline = deadline;
      this.done = done;
    }

    void finish(LookupResult r) {
      if (!finished) {
        finished = true;
        complete(done, r);
      }
    }

    @Override
    public boolean isDone() {
      return finished;
    }

    @Override
    public boolean cancel(Status status) {
      requireNonNull(status, "status");
      if (finished) {
        return false;
      }
      enter();
      try {
        forget(this);
        finish(LookupResult.of(status));
        return true;
      } finally {
        exit();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Unpublish

  /**
   * Removes published data. With keys: the requester's user's items holding them lose them,
   * whichever process or job published them (only an owner removes; nobody else's data is
   * touched). With no keys: every item the requesting process itself published goes, whatever its
   * persistence. With {@code pmix.range}: only items on that range, on the set it names as seen
   * from the requester.
   *
   * @return {@code PMIX_SUCCESS}, also when there was nothing of the requester's to remove; {@code
   *     PMIX_ERR_BAD_PARAM} or {@code PMIX_ERR_NOT_SUPPORTED} for a malformed request
   */
  public Status unpublish(Identity requester, List<String> keys, List<Info> directives) {
    requireNonNull(requester, "requester");
    requireNonNull(keys, "keys");
    requireNonNull(directives, "directives");
    enter();
    try {
      catchUp();
      Directives.Unpublish req;
      try {
        req = Directives.unpublish(keys, directives);
      } catch (PmixException e) {
        log.log(Level.DEBUG, "unpublish by {0} refused: {1}", requester, e.getMessage());
        return e.status();
      }
      Predicate<Publication> inRange =
          p ->
              req.range().isEmpty()
                  || (p.range() == req.range().get()
                      && Ranges.sameSet(p.range(), requester, p.publisher()));
      if (req.keys().isEmpty()) {
        for (Publication p : new ArrayList<>(items.values())) {
          if (p.publisher().proc().equals(requester.proc())
              && Access.sameUser(requester, p.publisher())
              && inRange.test(p)) {
            drop(p);
          }
        }
      } else {
        for (String key : req.keys()) {
          for (Publication p : new ArrayList<>(byKey.getOrDefault(key, List.of()))) {
            if (Access.sameUser(requester, p.publisher()) && inRange.test(p)) {
              removeKey(p, key);
            }
          }
        }
      }
      return Status.SUCCESS;
    } finally {
      exit();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Lifetimes

  /**
   * A process ended: its PROC items go, and its waiting lookups complete with {@code
   * PMIX_ERR_LOST_CONNECTION}.
   */
  public void procEnded(Proc proc) {
    requireNonNull(proc, "proc");
    // Anonymous classes, not lambdas, for the lifetimes: a lambda's first call costs a fresh JVM
    // 0.1-0.2 ms, and each runs once per job or process (docs/architecture.md, "First requests").
    end(
        Horizon.PROC,
        new Predicate<Identity>() {
          @Override
          public boolean test(Identity id) {
            return id.proc().equals(proc);
          }
        },
        "process " + proc);
  }

  /**
   * An application (app context) of a job ended: the PROC and APP items of its processes go, and
   * their waiting lookups complete with {@code PMIX_ERR_LOST_CONNECTION}. The job's other
   * applications are untouched.
   *
   * @throws IllegalArgumentException if {@code appNumber} is {@link Identity#UNKNOWN}
   */
  public void appEnded(String nspace, int appNumber) {
    requireNonNull(nspace, "nspace");
    if (appNumber == Identity.UNKNOWN) {
      throw new IllegalArgumentException("an application number is needed");
    }
    end(
        Horizon.APP,
        new Predicate<Identity>() {
          @Override
          public boolean test(Identity id) {
            return id.proc().nspace().equals(nspace) && id.appNumber() == appNumber;
          }
        },
        "application " + nspace + "#" + Integer.toUnsignedString(appNumber));
  }

  /**
   * A namespace (job) ended or was deregistered: the PROC, APP and NSPACE items its processes
   * published go, and their waiting lookups complete with {@code PMIX_ERR_LOST_CONNECTION}.
   */
  public void namespaceEnded(String nspace) {
    requireNonNull(nspace, "nspace");
    end(
        Horizon.NSPACE,
        new Predicate<Identity>() {
          @Override
          public boolean test(Identity id) {
            return id.proc().nspace().equals(nspace);
          }
        },
        "namespace " + nspace);
  }

  /**
   * A session ended: the PROC, APP, NSPACE and SESSION items its processes published go, and
   * their waiting lookups complete with {@code PMIX_ERR_LOST_CONNECTION}.
   *
   * @param sessionId the session, {@link Identity#UNKNOWN} for the default one
   */
  public void sessionEnded(int sessionId) {
    end(
        Horizon.SESSION,
        new Predicate<Identity>() {
          @Override
          public boolean test(Identity id) {
            return id.sessionId() == sessionId;
          }
        },
        "session " + sessionId);
  }

  private void end(Horizon horizon, Predicate<Identity> covers, String what) {
    enter();
    try {
      catchUp();
      int removed = 0;
      for (Publication p : new ArrayList<>(items.values())) {
        if (p.retention().endsWith(horizon) && covers.test(p.publisher())) {
          drop(p);
          removed++;
        }
      }
      for (Waiter w : new ArrayList<>(parked.values())) {
        if (covers.test(w.requester)) {
          forget(w);
          w.finish(LookupResult.of(Status.ERR_LOST_CONNECTION));
        }
      }
      if (removed > 0) {
        log.log(Level.DEBUG, "{0} ended: {1} items removed", what, removed);
      }
    } finally {
      exit();
    }
  }

  /** Completes every waiting lookup with {@code status}: for an owner shutting the store down. */
  public void cancelAll(Status status) {
    requireNonNull(status, "status");
    enter();
    try {
      for (Waiter w : new ArrayList<>(parked.values())) {
        forget(w);
        w.finish(LookupResult.of(status));
      }
    } finally {
      exit();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Time

  /**
   * Applies what is due by the clock: removes items idle for the timeout and times out waiting
   * lookups. Call it when {@link #untilNextDeadline()} says; calling it early or late is harmless.
   */
  public void advance() {
    enter();
    try {
      catchUp();
    } finally {
      exit();
    }
  }

  /**
   * How long until something falls due (an idle item's timeout, a waiting lookup's deadline);
   * empty when nothing will without a further call. Zero when something is already due.
   */
  public Optional<Duration> untilNextDeadline() {
    long now = now();
    long next = Long.MAX_VALUE;
    if (idleNanos > 0 && !idle.isEmpty()) {
      next = saturatedAdd(idle.iterator().next().lastAccess(), idleNanos);
    }
    if (!deadlines.isEmpty()) {
      next = Math.min(next, deadlines.first().deadline);
    }
    if (next == Long.MAX_VALUE) {
      return Optional.empty();
    }
    return Optional.of(Duration.ofNanos(Math.max(0, next - now)));
  }

  /** Nanoseconds since the store was built: never wraps, unlike the raw clock. */
  private long now() {
    return clock.getAsLong() - origin;
  }

  /** Applies what is due and returns the time. */
  @CanIgnoreReturnValue
  private long catchUp() {
    long now = now();
    if (idleNanos > 0) {
      Iterator<Publication> it = idle.iterator();
      while (it.hasNext()) {
        Publication p = it.next();
        // "No earlier than its timeout": gone once a full timeout has passed, not before.
        if (now - p.lastAccess() < idleNanos) {
          break;
        }
        log.log(Level.DEBUG, "{0} expired after {1}s idle", p, options.idleTimeout().toSeconds());
        drop(p);
        it = idle.iterator();
      }
    }
    while (!deadlines.isEmpty() && deadlines.first().deadline <= now) {
      Waiter w = deadlines.first();
      forget(w);
      w.finish(LookupResult.of(Status.ERR_TIMEOUT));
    }
    return now;
  }

  // ---------------------------------------------------------------------------------------------
  // Inspection

  /** How many items (publications holding at least one key) the store holds. */
  public int itemCount() {
    return items.size();
  }

  /** The bytes charged to {@code uid} now. */
  public long bytesHeldBy(int uid) {
    Usage u = usage.get(uid);
    return u == null ? 0 : u.bytes;
  }

  /** How many lookups are waiting. */
  public int pendingLookupCount() {
    return parked.size();
  }

  /**
   * Whether {@code publisher} has {@code key} stored, without the side effects of a lookup
   * (nothing is touched or consumed): for tests and operators.
   */
  public boolean holds(Proc publisher, String key) {
    for (Publication p : byKey.getOrDefault(key, List.of())) {
      if (p.publisher().proc().equals(publisher)) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------------------------------------
  // Bookkeeping: every change to the indexes goes through insert, touch, removeKey and drop.

  /** What one uid holds. */
  private static final class Usage {
    long bytes;
    final LinkedHashSet<Publication> lru = new LinkedHashSet<>();
  }

  private void insert(Publication p) {
    items.put(p.id(), p);
    for (String key : p.data().keySet()) {
      byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(p);
    }
    Usage u = usage.computeIfAbsent(p.publisher().uid(), k -> new Usage());
    u.bytes += p.charge();
    u.lru.add(p);
    if (p.retention().idleBounded()) {
      idle.add(p);
    }
  }

  /** Restamps an item's last use and moves it to the back of the LRU and idle orders. */
  private void touch(Publication p, long now) {
    p.touch(now);
    Usage u = requireNonNull(usage.get(p.publisher().uid()));
    u.lru.remove(p);
    u.lru.add(p);
    if (idle.remove(p)) {
      idle.add(p);
    }
  }

  /** Takes one key out of an item, dropping the item when it is left empty. */
  private void removeKey(Publication p, String key) {
    long freed = p.remove(key);
    if (freed == 0) {
      return;
    }
    List<Publication> holders = byKey.get(key);
    if (holders != null) {
      holders.remove(p);
      if (holders.isEmpty()) {
        byKey.remove(key);
      }
    }
    Usage u = requireNonNull(usage.get(p.publisher().uid()));
    u.bytes -= freed;
    if (p.data().isEmpty()) {
      drop(p);
    }
  }

  /** Takes an item out of the store, whatever keys it still holds. */
  private void drop(Publication p) {
    if (items.remove(p.id()) == null) {
      return;
    }
    for (String key : p.data().keySet()) {
      List<Publication> holders = byKey.get(key);
      if (holders != null) {
        holders.remove(p);
        if (holders.isEmpty()) {
          byKey.remove(key);
        }
      }
    }
    idle.remove(p);
    int uid = p.publisher().uid();
    Usage u = requireNonNull(usage.get(uid));
    u.bytes -= p.charge();
    u.lru.remove(p);
    if (u.lru.isEmpty()) {
      usage.remove(uid);
    }
  }

  /** Evicts {@code uid}'s own least recently used items until {@code need} more bytes fit. */
  private void makeRoom(int uid, long need) {
    if (maxBytes == 0) {
      return;
    }
    Usage u = usage.get(uid);
    while (u != null && u.bytes + need > maxBytes && !u.lru.isEmpty()) {
      Publication victim = u.lru.iterator().next();
      if (warned.add(uid)) {
        log.log(
            Level.WARNING,
            "published data of uid {0} reached the limit of {1} bytes per user ({2}); evicting"
                + " that user''s least recently used items",
            Integer.toUnsignedString(uid),
            Long.toString(maxBytes),
            DataStoreOptions.MAX_SIZE_PARAMETER);
      }
      log.log(Level.DEBUG, "evicting {0}", victim);
      drop(victim);
      u = usage.get(uid);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Completions

  private void enter() {
    depth++;
  }

  /** Leaves a call; the outermost one runs the completions it and nested calls queued. */
  private void exit() {
    depth--;
    if (depth > 0) {
      return;
    }
    Runnable r;
    while ((r = completions.poll()) != null) {
      try {
        r.run();
      } catch (RuntimeException e) {
        // The store's state is already consistent; one caller's broken callback must not stop
        // the others from being told.
        log.log(Level.WARNING, "a lookup completion failed", e);
      }
    }
  }

  private void complete(Consumer<LookupResult> done, LookupResult r) {
    completions.add(() -> done.accept(r));
  }

  // ---------------------------------------------------------------------------------------------

  private static List<Value.RegAttr> regAttrs(List<String> names) {
    ImmutableList.Builder<Value.RegAttr> out = ImmutableList.builder();
    for (String name : names) {
      int type =
          io.pmix.common.Keys.byName(name).map(k -> k.type().code()).orElse(DataType.BOOL.code());
      out.add(new Value.RegAttr(name, name, type, List.of(describe(name))));
    }
    return out.build();
  }

  private static String describe(String name) {
    if (name.equals(REPLACE_KEY)) {
      return "Replace the caller's own earlier publication of the same keys (same user)";
    }
    return "Honoured by the pmix-java data store";
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }
}
