package io.pmix.client.it;

import io.pmix.client.PMIx;
import io.pmix.client.internal.ClientHolder;
import io.pmix.client.internal.ClientThreads;
import io.pmix.common.DataRange;
import io.pmix.common.Event;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A Java PMIx client run by the integration tests as a child of a real PMIx server. Every rank
 * runs it with the same step arguments; each step prints one line
 * {@code JCLIENT <rank> <step> OK|FAIL [key=value ...]} which the test asserts on. Exits 1 at the
 * first failing step.
 */
public final class ClientMain {
  private static int rank = -1;
  private static String nspace = "?";
  private static int size;
  private static Set<Integer> localPeers = new TreeSet<>();
  private static final int EVENT_CODE = -3001;
  private static int barriers;

  private ClientMain() {}

  public static void main(String[] args) throws Exception {
    List<String> steps = Arrays.asList(args);
    for (int i = 0; i < steps.size(); i++) {
      String step = steps.get(i);
      String arg = i + 1 < steps.size() ? steps.get(i + 1) : "";
      long t0 = System.nanoTime();
      try {
        String detail = run(step, arg);
        if (step.equals("cycles") || step.equals("threads-after")) {
          i++;
        }
        print(step, "OK", detail + " usec=" + (System.nanoTime() - t0) / 1000);
      } catch (PmixException e) {
        print(step, "FAIL", e.status().name() + " " + e.getMessage());
        e.printStackTrace();
        System.exit(1);
      } catch (Exception | AssertionError e) {
        print(step, "FAIL", e.toString());
        e.printStackTrace();
        System.exit(1);
      }
    }
    System.exit(0);
  }

  private static void print(String step, String verdict, String detail) {
    System.out.println("JCLIENT " + rank + " " + step + " " + verdict + " " + detail.strip());
    System.out.flush();
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }

  private static String run(String step, String arg) throws Exception {
    switch (step) {
      case "init":
        return init();
      case "jobkeys":
        return jobKeys();
      case "put":
        put(0);
        return "";
      case "commit":
        PMIx.commit();
        return "";
      case "fence":
        PMIx.fence();
        return "";
      case "fence-collect":
        PMIx.fence(Info.of("pmix.collect", true));
        return "";
      case "peers":
        return peers(0);
      case "peers-again":
        return peersAgain();
      case "publish":
        if (rank == 0) {
          PMIx.publish(Info.of("jsvc." + nspace, "jvalue-" + nspace));
        }
        return "";
      case "lookup":
        {
          List<Value.PData> r =
              PMIx.lookup(
                  List.of("jsvc." + nspace),
                  Info.of("pmix.wait", Value.of(0)),
                  Info.of("pmix.timeout", Value.of(20)));
          check(r.size() == 1, "one result: " + r);
          check(r.get(0).value().asString().equals("jvalue-" + nspace), "value " + r);
          check(r.get(0).proc().equals(Proc.of(nspace, 0)), "publisher " + r);
          return "value=" + r.get(0).value().asString() + " publisher=" + r.get(0).proc();
        }
      case "unpublish":
        PMIx.fence();
        if (rank == 0) {
          PMIx.unpublish(List.of("jsvc." + nspace));
          try {
            List<Value.PData> r = PMIx.lookup(List.of("jsvc." + nspace));
            throw new AssertionError("still there: " + r);
          } catch (PmixException e) {
            check(e.status().equals(Status.ERR_NOT_FOUND), "status " + e.status());
          }
        }
        return "";
      case "events":
        return events();
      case "finalize":
        PMIx.finalize();
        check(!PMIx.initialized(), "still initialized");
        check(ClientHolder.isEmpty(), "holder not empty");
        return "";
      case "nested":
        return nested();
      case "cycles":
        return cycles(Integer.parseInt(arg));
      case "cput":
        cput();
        return "";
      case "cpeers":
        return cpeers();
      case "cpeers-early":
        return cpeersEarly();
      case "fence-procs":
        {
          List<Proc> all = new ArrayList<>();
          for (int r = size - 1; r >= 0; r--) {
            all.add(Proc.of(nspace, r));
          }
          PMIx.fence(all, Info.of("pmix.timeout", Value.of(30)));
          return "procs=" + all.size();
        }
      case "get-options":
        return getOptions();
      case "abort":
        PMIx.fence();
        if (rank == 0) {
          print("abort", "OK", "calling");
          PMIx.abort(Status.of(42), "java abort", new Proc[0]);
          Thread.sleep(30_000);
          throw new AssertionError("abort returned and the process was not killed");
        }
        PMIx.fence();
        throw new AssertionError("fence returned after abort");
      case "barrier":
        barriers++;
        fileBarrier("step." + barriers);
        return "";
      case "threads":
        return "live=" + Thread.activeCount() + " library=" + libraryThreads();
      case "blocking-from-callback":
        return blockingFromCallback();
      default:
        throw new IllegalArgumentException("unknown step " + step);
    }
  }

  private static String init() {
    Proc me = PMIx.init();
    rank = me.rank();
    nspace = me.nspace();
    check(!PMIx.isSingleton(), "singleton under a server");
    size = PMIx.get(Proc.wildcard(nspace), "pmix.job.size").asInt();
    String lpeers = PMIx.get(Proc.wildcard(nspace), "pmix.lpeers").asString();
    localPeers = new TreeSet<>();
    for (String s : com.google.common.base.Splitter.on(',').split(lpeers)) {
      localPeers.add(Integer.parseInt(s.trim()));
    }
    return "nspace=" + nspace + " rank=" + rank + " size=" + size + " gds="
        + ClientHolder.require().gdsModule();
  }

  private static String jobKeys() {
    Proc wild = Proc.wildcard(nspace);
    Proc self = Proc.of(nspace, rank);
    StringBuilder b = new StringBuilder();
    long jobSize = PMIx.get(wild, "pmix.job.size").asLong();
    long univ = PMIx.get(wild, "pmix.univ.size").asLong();
    long localSize = PMIx.get(wild, "pmix.local.size").asLong();
    String lpeers = PMIx.get(wild, "pmix.lpeers").asString();
    String jobid = PMIx.get(wild, "pmix.jobid").asString();
    String ns = PMIx.get(wild, "pmix.nspace").asString();
    int lrank = PMIx.get(self, "pmix.lrank").asInt();
    int nrank = PMIx.get(self, "pmix.nrank").asInt();
    long appnum = PMIx.get(self, "pmix.appnum").asLong();
    String host = PMIx.get(self, "pmix.hname").asString();
    long nodeid = PMIx.get(self, "pmix.nodeid").asLong();
    long myRank = PMIx.get(self, "pmix.rank").asLong();
    long myRankInvalid = PMIx.get(Proc.of(nspace, Proc.RANK_INVALID), "pmix.rank").asLong();
    check(rank < jobSize, "rank < size");
    // Open MPI 4.1's mpirun reports the core count as universe size for an oversubscribed job
    // (docs/libpmix-facts.md); every other server we run under must keep size <= univ.
    check(jobSize <= univ || System.getenv("OMPI_COMM_WORLD_SIZE") != null, "size <= univ");
    check(ns.equals(nspace), "nspace");
    check(myRank == rank && myRankInvalid == rank, "pmix.rank");
    check(localSize == localPeers.size(), "local size vs lpeers");
    check(lrank < localSize, "lrank < local size");
    // Every peer's host name comes from job data, with no message.
    for (int r = 0; r < size; r++) {
      check(!PMIx.get(Proc.of(nspace, r), "pmix.hname").asString().isEmpty(), "peer hname");
    }
    b.append("job.size=").append(jobSize)
        .append(" univ.size=").append(univ)
        .append(" local.size=").append(localSize)
        .append(" lpeers=").append(lpeers)
        .append(" jobid=").append(jobid)
        .append(" lrank=").append(lrank)
        .append(" nrank=").append(nrank)
        .append(" appnum=").append(appnum)
        .append(" hname=").append(host)
        .append(" nodeid=").append(nodeid)
        .append(" rank=").append(myRank);
    return b.toString();
  }

  private static void put(int cycle) {
    PMIx.put(Scope.LOCAL, "jt.local." + rank, Value.of("local-" + rank + "-" + cycle));
    PMIx.put(Scope.REMOTE, "jt.remote", Value.uint32(1000 + rank));
    PMIx.put(Scope.GLOBAL, "jt.global", Value.of("global-" + rank + "-" + cycle));
    PMIx.put(Scope.GLOBAL, "jt.i64", Value.of(-5_000_000_000L - rank));
    PMIx.put(Scope.GLOBAL, "jt.bytes", Value.of(new byte[] {1, 2, 3, (byte) rank}));
  }

  /** The keys and values pmix_client_check.c puts (salt 0), so C and Java ranks can mix. */
  private static List<Object[]> cKeys(int r) {
    int len = 8 + r % 8;
    byte[] bo = new byte[len];
    for (int k = 0; k < len; k++) {
      bo[k] = (byte) ((r * 31 + k * 7) & 0xff);
    }
    return List.of(
        new Object[] {"test.str." + r, Scope.LOCAL, Value.of("str-" + nspace + "-" + r + "-0")},
        new Object[] {"test.bool", Scope.LOCAL, Value.of(r % 2 == 0)},
        new Object[] {"test.u32", Scope.REMOTE, Value.uint32(1000 + r * 7L)},
        new Object[] {"test.dbl", Scope.REMOTE, Value.of(r * 1.5 + 0.25)},
        new Object[] {"test.bo", Scope.GLOBAL, Value.of(bo)},
        new Object[] {"test.i64", Scope.GLOBAL, Value.of(-((long) r + 1) * 10000000007L)},
        new Object[] {"test.gstr", Scope.GLOBAL, Value.of("glob-" + r + "-0")});
  }

  private static void cput() {
    for (Object[] k : cKeys(rank)) {
      PMIx.put((Scope) k[1], (String) k[0], (Value) k[2]);
    }
  }

  private static String cpeers() {
    int n = 0;
    for (int r = 0; r < size; r++) {
      boolean local = localPeers.contains(r);
      for (Object[] k : cKeys(r)) {
        Scope scope = (Scope) k[1];
        if (scope == Scope.GLOBAL || (local ? scope == Scope.LOCAL : scope == Scope.REMOTE)) {
          Value v = PMIx.get(Proc.of(nspace, r), (String) k[0], Info.of("pmix.timeout", Value.of(10)));
          check(v.equals(k[2]), k[0] + " of rank " + r + ": " + v + " != " + k[2]);
          n++;
        }
      }
      // An empty namespace is our own, as libpmix's client reads it (with directives, so that
      // the get is resolved anew rather than answered from the first one's copy).
      Object[] k = cKeys(r).get(4); // test.bo, GLOBAL: in scope for every rank
      Value v = PMIx.get(Proc.of("", r), (String) k[0], Info.of("pmix.timeout", Value.of(10)));
      check(v.equals(k[2]), k[0] + " of rank " + r + " asked of namespace \"\": " + v);
    }
    return "gets=" + n;
  }

  /**
   * Every other rank's in-scope keys of {@link #cKeys}, got before those ranks have committed
   * them: each get waits at the server for the rank's commit.
   */
  private static String cpeersEarly() {
    int n = 0;
    for (int r = 0; r < size; r++) {
      if (r == rank) {
        continue;
      }
      boolean local = localPeers.contains(r);
      for (Object[] k : cKeys(r)) {
        Scope scope = (Scope) k[1];
        if (scope == Scope.GLOBAL || (local ? scope == Scope.LOCAL : scope == Scope.REMOTE)) {
          Value v =
              PMIx.get(Proc.of(nspace, r), (String) k[0], Info.of("pmix.timeout", Value.of(20)));
          check(v.equals(k[2]), k[0] + " of rank " + r + ": " + v + " != " + k[2]);
          n++;
        }
      }
    }
    return "gets=" + n;
  }

  private static String peers(int cycle) {
    int n = 0;
    for (int r = 0; r < size; r++) {
      Proc p = Proc.of(nspace, r);
      Value g = PMIx.get(p, "jt.global", Info.of("pmix.timeout", Value.of(10)));
      check(g.asString().equals("global-" + r + "-" + cycle), "global of " + r + ": " + g);
      check(PMIx.get(p, "jt.i64").asLong() == -5_000_000_000L - r, "i64 of " + r);
      check(Arrays.equals(PMIx.get(p, "jt.bytes").asBytes(), new byte[] {1, 2, 3, (byte) r}), "bytes");
      if (localPeers.contains(r)) {
        Value l = PMIx.get(p, "jt.local." + r);
        check(l.asString().equals("local-" + r + "-" + cycle), "local of " + r + ": " + l);
      }
      n++;
    }
    return "peers=" + n;
  }

  /**
   * After {@code peers}, under a server without a shared-memory store: each other rank's key asked
   * again without directives is answered on this thread, with what the first get gave.
   */
  private static String peersAgain() throws Exception {
    int n = 0;
    for (int r = 0; r < size; r++) {
      if (r == rank) {
        continue;
      }
      CompletableFuture<Value> f = PMIx.getAsync(Proc.of(nspace, r), "jt.i64");
      check(f.isDone(), "the second get of rank " + r + "'s key went to the progress thread");
      check(f.get().asLong() == -5_000_000_000L - r, "i64 of " + r + " asked again: " + f.get());
      n++;
    }
    return "answered=" + n;
  }

  private static String getOptions() {
    int peer = (rank + 1) % size;
    Proc p = Proc.of(nspace, peer);
    StringBuilder b = new StringBuilder();
    for (Info[] opts :
        new Info[][] {
          {Info.of("pmix.optional", true)},
          {Info.of("pmix.immediate", true)},
          {Info.of("pmix.timeout", Value.of(1))},
        }) {
      long t0 = System.nanoTime();
      try {
        Value v = PMIx.get(p, "never.put", opts);
        throw new AssertionError("got " + v);
      } catch (PmixException e) {
        b.append(opts[0].key()).append('=').append(e.status().name())
            .append(" ms.").append(opts[0].key()).append('=')
            .append((System.nanoTime() - t0) / 1_000_000).append(' ');
      }
    }
    return b.toString();
  }

  private static String events() throws Exception {
    CompletableFuture<Event> got = new CompletableFuture<>();
    long id = PMIx.registerEventHandler(List.of(Status.of(EVENT_CODE)), got::complete);
    PMIx.fence();
    if (rank == 0) {
      PMIx.notifyEvent(
          Status.of(EVENT_CODE), DataRange.NAMESPACE, Info.of("jt.event.data", "from-" + nspace));
    }
    Event e = got.get(20, TimeUnit.SECONDS);
    check(e.status().code() == EVENT_CODE, "code");
    check(e.source().equals(Proc.of(nspace, 0)), "source " + e.source());
    check(
        e.find("jt.event.data").orElseThrow().value().asString().equals("from-" + nspace), "data");
    PMIx.deregisterEventHandler(id);
    PMIx.fence();
    return "source=" + e.source();
  }

  private static String nested() {
    Proc a = PMIx.init();
    Proc b = PMIx.init();
    check(a.equals(b), "same proc");
    check(ClientHolder.refCount() == 3, "refcount " + ClientHolder.refCount());
    List<Thread> before = libraryThreadList();
    PMIx.finalize();
    PMIx.finalize();
    check(PMIx.initialized(), "nested finalize tore down");
    check(libraryThreadList().equals(before), "threads changed by nested finalize");
    // Still fully usable.
    check(PMIx.get(Proc.wildcard(nspace), "pmix.job.size").asInt() == size, "get after nested");
    PMIx.fence();
    return "refcount=" + ClientHolder.refCount();
  }

  private static String cycles(int n) {
    int baseline = -1;
    int maxLive = 0;
    for (int c = 1; c <= n; c++) {
      Proc me = PMIx.init();
      check(me.nspace().equals(nspace) && me.rank() == rank, "identity");
      check(PMIx.get(Proc.wildcard(nspace), "pmix.job.size").asInt() == size, "job size");
      put(c);
      PMIx.commit();
      PMIx.fence(Info.of("pmix.collect", true));
      var unused = peers(c);
      // The 4.2.2 server drops a finalizing client from pending fences (docs/libpmix-facts.md):
      // a second fence keeps fast ranks from finalizing while a slow one is still in the first.
      PMIx.fence();
      PMIx.finalize();
      // ... and nobody inits and fences again while another rank is still finalizing.
      fileBarrier("cycle." + c);
      check(ClientHolder.isEmpty(), "holder not empty after cycle " + c);
      check(libraryThreads() == 0, "library threads left after cycle " + c);
      int live = Thread.activeCount();
      if (c == 5) {
        baseline = live;
      }
      if (c >= 5) {
        // The first cycles may start JDK or Netty helpers once; from then on nothing may grow.
        maxLive = Math.max(maxLive, live);
      }
    }
    return "cycles=" + n + " baseline.threads=" + baseline + " max.threads=" + maxLive
        + " end.threads=" + Thread.activeCount();
  }

  private static String blockingFromCallback() throws Exception {
    // An event handler runs on the library's callback thread: a blocking get there is refused.
    CompletableFuture<String> r = new CompletableFuture<>();
    long id =
        PMIx.registerEventHandler(
            List.of(Status.of(-3002)),
            e -> {
              try {
                r.complete("no exception: " + PMIx.get(Proc.wildcard(nspace), "pmix.job.size"));
              } catch (IllegalStateException ex) {
                r.complete("refused");
              }
            });
    PMIx.notifyEvent(Status.of(-3002), DataRange.PROC_LOCAL);
    String s = r.get(10, TimeUnit.SECONDS);
    PMIx.deregisterEventHandler(id);
    check(s.equals("refused"), s);
    return s;
  }

  /**
   * A barrier outside PMIx, through files in the job's session directory: 4.2.2 servers remove a
   * finalizing client from pending fences (docs/libpmix-facts.md), so ranks that cycle must not
   * fence while another one is finalizing.
   */
  private static void fileBarrier(String name) {
    String dirName = System.getenv("PMIX_SERVER_TMPDIR");
    java.nio.file.Path dir =
        java.nio.file.Path.of(dirName != null ? dirName : System.getProperty("java.io.tmpdir"));
    try {
      java.nio.file.Files.writeString(dir.resolve("jbarrier." + nspace + "." + name + "." + rank), "");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      for (int r = 0; r < size; r++) {
        java.nio.file.Path f = dir.resolve("jbarrier." + nspace + "." + name + "." + r);
        while (!java.nio.file.Files.exists(f)) {
          check(System.nanoTime() < deadline, "barrier " + name + " timed out");
          Thread.sleep(2);
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static int libraryThreads() {
    return libraryThreadList().size();
  }

  private static List<Thread> libraryThreadList() {
    List<Thread> out = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith(ClientThreads.NAME_PREFIX) && t.isAlive()) {
        out.add(t);
      }
    }
    out.sort((x, y) -> Long.compare(x.getId(), y.getId()));
    return out;
  }
}
