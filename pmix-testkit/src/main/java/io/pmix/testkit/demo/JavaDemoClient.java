package io.pmix.testkit.demo;

import com.google.common.base.Splitter;
import io.pmix.client.PMIx;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Scope;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A PMIx client written in Java (pmix-client) that does what {@code pmix_client_check --init --put
 * --commit --fence-collect --get-peers --publish --lookup --unpublish --finalize} does, with the
 * same keys, values and service, so that Java and C clients can be ranks of one job (bin/demo runs
 * Java on the even ranks and C on the odd ones): each rank puts the seven test keys in the LOCAL,
 * REMOTE and GLOBAL scopes, commits, fences collecting data, reads every peer's keys that are in
 * scope and compares them with the values that peer must have put; rank 0 publishes {@code
 * svc.<nspace>} = {@code svc-value-<nspace>}, the others look it up waiting for it; after a
 * barrier rank 0 unpublishes it and checks that it is gone; finalize.
 *
 * <p>With {@code --no-publish} (for servers without a data service, such as Slurm's) it skips
 * publish, lookup and unpublish and passes a plain fence instead, as {@code pmix_client_check
 * --init --put --commit --fence-collect --get-peers --fence --finalize} does, so the two can be
 * ranks of one job there too.
 *
 * <p>With {@code --fenced-lookup} (for servers whose lookup ignores {@code PMIX_WAIT}, such as
 * OpenPMIx's {@code simptest}) a fence orders publish and lookup instead: rank 0 publishes, every
 * rank fences, then looks the service up without waiting.
 *
 * <p>With {@code --strict-scope}, as {@code pmix_client_check --strict-scope}, the keys of other
 * ranks that are out of scope for this one (REMOTE keys of local peers, LOCAL keys of remote
 * ones) are got too and must give {@code PMIX_ERR_NOT_FOUND}.
 *
 * <p>Prints one line per step, {@code STEP <name> OK lang=java ...} in the C client's format, and
 * exits 1 after the first failed step ({@code STEP <name> FAIL ...}).
 */
public final class JavaDemoClient {
  private static final int TIMEOUT_S = 60;

  private JavaDemoClient() {}

  /**
   * The command line that runs this client with {@code args} in a new JVM of the running one's
   * Java and class path, tuned for short runs (serial GC, C1 only): what a test's launcher
   * starts as a Java rank.
   */
  public static List<String> command(String... args) {
    List<String> l = new ArrayList<>();
    l.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    l.addAll(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp"));
    l.add(System.getProperty("java.class.path"));
    l.add(JavaDemoClient.class.getName());
    l.addAll(Arrays.asList(args));
    return l;
  }

  public static void main(String[] args) {
    boolean publish = true;
    boolean strictScope = false;
    boolean fencedLookup = false;
    for (String a : args) {
      if (a.equals("--no-publish")) {
        publish = false;
      } else if (a.equals("--fenced-lookup")) {
        fencedLookup = true;
      } else if (a.equals("--strict-scope")) {
        strictScope = true;
      } else {
        System.err.println("usage: JavaDemoClient [--no-publish] [--fenced-lookup] [--strict-scope]");
        System.exit(2);
      }
    }
    String step = "init";
    try {
      long t0 = System.nanoTime();
      Proc me = PMIx.init();
      String ns = me.nspace();
      int rank = me.rank();
      int size = Math.toIntExact(PMIx.get(Proc.wildcard(ns), Keys.JOB_SIZE.name()).asLong());
      // Which data plane the client chose (hash, or the shared-memory ds21/ds12 of a libpmix 4.x
      // server): a diagnostic the facade does not offer, read from the library's internals.
      String gds = io.pmix.client.internal.ClientHolder.require().gdsModule();
      ok(step, t0, "rank=" + rank + " size=" + size + " nspace=" + ns + " gds=" + gds);

      step = "put";
      t0 = System.nanoTime();
      for (int i = 0; i < KEYS.length; i++) {
        PMIx.put(KEYS[i].scope, keyName(i, rank), expected(i, ns, rank));
      }
      ok(step, t0, "keys=" + KEYS.length);

      step = "commit";
      t0 = System.nanoTime();
      PMIx.commit();
      ok(step, t0, "");

      step = "fence-collect";
      t0 = System.nanoTime();
      PMIx.fence(Info.of(Keys.COLLECT_DATA.name(), true));
      ok(step, t0, "collect=1");

      step = "get-peers";
      t0 = System.nanoTime();
      Set<Integer> local = localPeers(ns, rank);
      int gets = 0;
      for (int p = 0; p < size; p++) {
        boolean isLocal = local.contains(p);
        for (int i = 0; i < KEYS.length; i++) {
          Scope s = KEYS[i].scope;
          if (p != rank && ((s == Scope.LOCAL && !isLocal) || (s == Scope.REMOTE && isLocal))) {
            // Out of scope for us: with --strict-scope it must not be found.
            if (strictScope) {
              gets++;
              try {
                Value got = PMIx.get(Proc.of(ns, p), keyName(i, p), timeout());
                fail(step, t0, "peer=" + p + " key=" + keyName(i, p) + " scope=" + s + " got="
                    + got + " want=NOT-FOUND");
              } catch (PmixException e) {
                if (!e.status().equals(Status.ERR_NOT_FOUND)) {
                  fail(step, t0, "peer=" + p + " key=" + keyName(i, p) + " scope=" + s + " got="
                      + e.status() + " want=NOT-FOUND");
                }
              }
            }
            continue;
          }
          Value got = PMIx.get(Proc.of(ns, p), keyName(i, p), timeout());
          gets++;
          Value want = expected(i, ns, p);
          if (!same(got, want)) {
            fail(step, t0, "peer=" + p + " key=" + keyName(i, p) + " got=" + got + " want=" + want);
          }
        }
      }
      ok(step, t0, "gets=" + gets + " peers=" + size);

      if (!publish) {
        step = "fence";
        t0 = System.nanoTime();
        PMIx.fence();
        ok(step, t0, "collect=0");
        step = "finalize";
        t0 = System.nanoTime();
        PMIx.finalize();
        ok(step, t0, "");
        System.exit(0);
      }

      String svc = "svc." + ns;
      String svcValue = "svc-value-" + ns;
      step = "publish";
      t0 = System.nanoTime();
      if (rank == 0) {
        PMIx.publish(Info.of(svc, Value.of(svcValue)));
        ok(step, t0, "role=publisher key=" + svc);
      } else {
        ok(step, t0, "role=none");
      }

      step = "lookup";
      t0 = System.nanoTime();
      if (fencedLookup) {
        PMIx.fence(); // rank 0 has published
      }
      boolean wait = rank != 0 && !fencedLookup;
      List<Value.PData> found =
          !wait
              ? PMIx.lookup(List.of(svc))
              : PMIx.lookup(List.of(svc), Info.of(Keys.WAIT.name(), Value.of(0)), timeout());
      if (found.size() != 1
          || !found.get(0).value().type().equals(DataType.STRING)
          || !svcValue.equals(found.get(0).value().asString())
          || !found.get(0).proc().equals(Proc.of(ns, 0))) {
        fail(step, t0, "key=" + svc + " got=" + found + " want=" + svcValue + " from rank 0");
      }
      ok(step, t0, "key=" + svc + " wait=" + (wait ? 1 : 0) + " value=" + svcValue
          + " publisher=" + ns + ":0");

      step = "unpublish";
      t0 = System.nanoTime();
      PMIx.fence(); // everybody is done looking up
      if (rank == 0) {
        PMIx.unpublish(List.of(svc));
        try {
          List<Value.PData> still = PMIx.lookup(List.of(svc));
          fail(step, t0, "phase=lookup-after-unpublish got=" + still + " want=NOT-FOUND");
        } catch (PmixException e) {
          if (!e.status().equals(Status.ERR_NOT_FOUND)) {
            throw e;
          }
        }
        ok(step, t0, "role=publisher key=" + svc);
      } else {
        ok(step, t0, "role=none");
      }

      step = "finalize";
      t0 = System.nanoTime();
      PMIx.finalize();
      ok(step, t0, "");
    } catch (PmixException e) {
      System.out.println("STEP " + step + " FAIL lang=java " + e.status() + " " + e.getMessage());
      System.out.flush();
      System.exit(1);
    }
    System.exit(0);
  }

  private record TestKey(String name, Scope scope) {}

  /** pmix_client_check's test keys ({@code %u}: the rank of the process that put it). */
  private static final TestKey[] KEYS = {
    new TestKey("test.str.%u", Scope.LOCAL),
    new TestKey("test.bool", Scope.LOCAL),
    new TestKey("test.u32", Scope.REMOTE),
    new TestKey("test.dbl", Scope.REMOTE),
    new TestKey("test.bo", Scope.GLOBAL),
    new TestKey("test.i64", Scope.GLOBAL),
    new TestKey("test.gstr", Scope.GLOBAL),
  };

  private static String keyName(int i, int rank) {
    return KEYS[i].name.replace("%u", Integer.toString(rank));
  }

  /** The value rank {@code r} puts under key {@code i} (pmix_client_check's tkey_value, salt 0). */
  private static Value expected(int i, String ns, int r) {
    return switch (i) {
      case 0 -> Value.of("str-" + ns + "-" + r + "-0");
      case 1 -> Value.of(r % 2 == 0);
      case 2 -> Value.uint32(1000L + r * 7L);
      case 3 -> Value.of(r * 1.5 + 0.25);
      case 4 -> {
        byte[] b = new byte[8 + r % 8];
        for (int k = 0; k < b.length; k++) {
          b[k] = (byte) ((r * 31 + k * 7) & 0xff);
        }
        yield Value.of(b);
      }
      case 5 -> Value.of(-((long) r + 1) * 10000000007L);
      case 6 -> Value.of("glob-" + r + "-0");
      default -> throw new IllegalArgumentException("key " + i);
    };
  }

  private static boolean same(Value got, Value want) {
    if (!got.type().equals(want.type())) {
      return false;
    }
    DataType t = want.type();
    if (t.equals(DataType.BYTE_OBJECT)) {
      return Arrays.equals(got.asBytes(), want.asBytes());
    } else if (t.equals(DataType.STRING)) {
      return want.asString().equals(got.asString());
    } else if (t.equals(DataType.BOOL)) {
      return got.asBoolean() == want.asBoolean();
    } else if (t.equals(DataType.DOUBLE)) {
      return got.asDouble() == want.asDouble();
    }
    return got.asLong() == want.asLong();
  }

  /** The job's ranks on this node ({@code pmix.lpeers}, "0,1,2,3"), this process included. */
  private static Set<Integer> localPeers(String ns, int rank) {
    Set<Integer> local = new HashSet<>();
    local.add(rank);
    String peers = PMIx.get(Proc.wildcard(ns), Keys.LOCAL_PEERS.name()).asString();
    for (String p : Splitter.on(',').trimResults().omitEmptyStrings().split(peers)) {
      local.add(Integer.parseInt(p));
    }
    return local;
  }

  private static Info timeout() {
    return Info.of(Keys.TIMEOUT.name(), Value.of(TIMEOUT_S));
  }

  private static void ok(String step, long t0, String detail) {
    long usec = (System.nanoTime() - t0) / 1000;
    System.out.println(
        "STEP " + step + " OK lang=java usec=" + usec + (detail.isEmpty() ? "" : " " + detail));
    System.out.flush();
  }

  private static void fail(String step, long t0, String detail) {
    long usec = (System.nanoTime() - t0) / 1000;
    System.out.println("STEP " + step + " FAIL lang=java usec=" + usec + " " + detail);
    System.out.flush();
    System.exit(1);
  }
}
