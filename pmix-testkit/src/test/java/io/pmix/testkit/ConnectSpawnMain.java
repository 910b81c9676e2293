package io.pmix.testkit;

import io.pmix.client.PMIx;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A Java PMIx client (pmix-client) for {@link ConnectSpawnIT}, run as ranks of a job under a real
 * PMIx server (Open MPI's mpirun or ours). Each step prints {@code CS <rank> <step> OK|FAIL
 * [detail]}; the first failing step ends the process with status 1. {@code
 * src/test/c/pmix_connect_spawn.c} is its libpmix twin: same steps, same lines.
 *
 * <ul>
 *   <li>{@code connect} / {@code disconnect}: over the whole own namespace.
 *   <li>{@code connect-timeout}: rank 0 alone connects with ranks 0 and 1 and {@code
 *       pmix.timeout} 1 s; passes when the server answers ERR_TIMEOUT (the others do nothing).
 *   <li>{@code connect-lost-finalize}, {@code connect-lost-halt}: rank 1 leaves (finalize and
 *       exit, or exit without finalize) while rank 0 connects with ranks 0 and 1; passes when rank
 *       0's connect fails, printing the status.
 *   <li>{@code spawn N CMD ARGS...} (rank 0 only, the rest of the arguments): spawns N copies,
 *       then gets the child's {@code pmix.job.size} from the cached spawn reply.
 *   <li>{@code spawn-connect N CMD ARGS...} (a one-process job): spawns N copies with {@code
 *       CS_PEER_NS} set to this namespace, then connects with the child job, reads its job size
 *       locally, disconnects and checks the child's data is dropped; the child runs {@code
 *       connect-peer}, which does the same the other way.
 *   <li>{@code spawn-bad}: (rank 0) spawns a command that does not exist; passes on a
 *       PmixException, printing its status.
 *   <li>{@code spawn-reqd CMD}: (rank 0) spawns one {@code CMD} with the directive {@code
 *       pmix.bindto=core} flagged required; passes when the spawn fails, printing the status.
 *   <li>{@code spawn-apps NA CMDA ARGS... + NB CMDB ARGS...} (last step, rank 0): one spawn of
 *       two apps, NA copies of CMDA (environment {@code CS_APP=A}) and NB of CMDB ({@code
 *       CS_APP=B}, working directory {@code /}), each with the step {@code app-info} appended,
 *       with the job-level directives {@code pmix.mapby=slot}, {@code pmix.rankby=slot} and a
 *       {@code pmix.bindto=none} (what mpirun and our host both do); prints the child's job size and app 1's
 *       {@code pmix.app.size} (qualified by {@code pmix.appnum}) from the spawn reply.
 *   <li>{@code app-info}: prints this process's {@code pmix.appnum}, {@code pmix.apprank},
 *       {@code pmix.app.size}, its job's size, {@code CS_APP}, its working directory and {@code
 *       lang=java} (the C twin says {@code lang=c}).
 * </ul>
 */
public final class ConnectSpawnMain {
  private static int rank = -1;

  private ConnectSpawnMain() {}

  public static void main(String[] args) throws InterruptedException, IOException {
    Proc me = PMIx.init();
    rank = me.rank();
    print("init", "OK", me.toString());
    List<String> a = Arrays.asList(args);
    for (int i = 0; i < a.size(); i++) {
      String step = a.get(i);
      try {
        switch (step) {
          case "connect" -> {
            PMIx.connect(List.of(Proc.wildcard(me.nspace())));
            print(step, "OK", "");
          }
          case "disconnect" -> {
            PMIx.disconnect(List.of(Proc.wildcard(me.nspace())));
            print(step, "OK", "");
          }
          case "connect-timeout" -> {
            if (rank != 0) {
              // Stay connected past the timeout: a participant that goes away ends the connect
              // differently (connect-lost).
              Thread.sleep(2500);
            } else {
              try {
                PMIx.connect(
                    List.of(Proc.of(me.nspace(), 0), Proc.of(me.nspace(), 1)),
                    Info.of("pmix.timeout", Value.of(1)));
                print(step, "FAIL", "connect without the other rank succeeded");
                System.exit(1);
              } catch (PmixException e) {
                print(step, e.status().code() == -24 ? "OK" : "FAIL",
                    "status=" + e.status().code() + " " + e.status().name());
                if (e.status().code() != -24) {
                  System.exit(1);
                }
              }
            }
          }
          case "connect-lost-finalize", "connect-lost-halt" -> {
            Path marker = marker(me);
            if (rank != 0) {
              // Vanish without joining once rank 0 waits in its connect (it drops a marker file
              // just before it calls): orderly (finalize, then exit) or abruptly (no finalize).
              // Gone before rank 0 arrives, the rank would no longer count as local: libpmix
              // hands the connect to its host instead, ours completes it, and both succeed.
              awaitMarker(marker);
              if (step.endsWith("finalize")) {
                PMIx.finalize();
                System.exit(0);
              }
              Runtime.getRuntime().halt(0);
            }
            try {
              Files.writeString(marker, "connecting");
              PMIx.connect(List.of(Proc.of(me.nspace(), 0), Proc.of(me.nspace(), 1)));
              print(step, "FAIL", "connect without the other rank succeeded");
              System.exit(1);
            } catch (PmixException e) {
              print(step, "OK", "status=" + e.status().code() + " " + e.status().name());
            } finally {
              Files.deleteIfExists(marker);
            }
          }
          case "spawn" -> {
            int n = Integer.parseInt(a.get(i + 1));
            List<String> cmd = a.subList(i + 2, a.size());
            i = a.size();
            if (rank == 0) {
              String child =
                  PMIx.spawn(
                      List.of(new Value.App(cmd.get(0), cmd, List.of(), null, n, List.of())));
              // pmix.optional: only what is held locally, i.e. what the spawn reply carried.
              Value size =
                  PMIx.get(Proc.wildcard(child), "pmix.job.size", Info.of("pmix.optional", true));
              print(step, "OK", "nspace=" + child + " job.size=" + size.asInt());
            }
          }
          case "spawn-connect" -> {
            // Rank 0 of a one-process job: spawn, connect with the child, disconnect again.
            int n = Integer.parseInt(a.get(i + 1));
            List<String> cmd = a.subList(i + 2, a.size());
            i = a.size();
            String child =
                PMIx.spawn(
                    List.of(new Value.App(cmd.get(0), cmd, List.of(PEER_ENV + "=" + me.nspace()),
                        null, n, List.of())));
            print("spawn", "OK", "nspace=" + child + " job.size="
                + PMIx.get(Proc.wildcard(child), "pmix.job.size", OPTIONAL).asInt());
            connectPeer(me, child);
          }
          case "connect-peer" -> {
            // A spawned process: connect with the job that spawned it, then disconnect.
            String peer = System.getenv(PEER_ENV);
            if (peer == null) {
              throw new IllegalStateException(PEER_ENV + " is not set");
            }
            // Who spawned us, if the host says (pmix.parent in the job data): informative.
            String parent;
            try {
              parent = PMIx.get(Proc.wildcard(me.nspace()), "pmix.parent").toString();
            } catch (PmixException e) {
              parent = "none (" + e.status().name() + ")";
            }
            print("parent", "OK", parent);
            connectPeer(me, peer);
          }
          case "spawn-bad" -> {
            if (rank == 0) {
              try {
                String child =
                    PMIx.spawn(
                        List.of(new Value.App("/nonexistent/pmix-java-no-such-program", List.of(),
                            List.of(), null, 1, List.of())));
                print(step, "FAIL", "spawned " + child);
                System.exit(1);
              } catch (PmixException e) {
                print(step, "OK", "status=" + e.status().code() + " " + e.status().name());
              }
            }
          }
          case "spawn-reqd" -> {
            String cmd = a.get(++i);
            if (rank == 0) {
              try {
                String child =
                    PMIx.spawn(
                        List.of(new Value.App(cmd, List.of(cmd), List.of(), null, 1, List.of())),
                        Info.required("pmix.bindto", Value.of("core")));
                print(step, "FAIL", "spawned " + child);
                System.exit(1);
              } catch (PmixException e) {
                print(step, "OK", "status=" + e.status().code() + " " + e.status().name());
              }
            }
          }
          case "spawn-apps" -> {
            List<String> rest = a.subList(i + 1, a.size());
            i = a.size();
            int plus = rest.indexOf("+");
            if (plus < 2 || plus + 2 >= rest.size()) {
              throw new IllegalArgumentException("spawn-apps NA CMDA... + NB CMDB...: " + rest);
            }
            if (rank == 0) {
              List<Value.App> apps =
                  List.of(
                      app(rest.subList(0, plus), "A", null),
                      app(rest.subList(plus + 1, rest.size()), "B", "/"));
              String child =
                  PMIx.spawn(
                      apps,
                      Info.of("pmix.mapby", Value.of("slot")),
                      Info.of("pmix.rankby", Value.of("slot")),
                      Info.of("pmix.bindto", Value.of("none")));
              int size = PMIx.get(Proc.wildcard(child), "pmix.job.size", OPTIONAL).asInt();
              int app1 =
                  PMIx.get(Proc.wildcard(child), "pmix.app.size", OPTIONAL,
                      Info.of("pmix.appnum", Value.uint32(1))).asInt();
              print(step, "OK", "nspace=" + child + " job.size=" + size + " app1.size=" + app1);
            }
          }
          case "app-info" -> {
            long appnum = PMIx.get(me, "pmix.appnum").asLong();
            long apprank = PMIx.get(me, "pmix.apprank").asLong();
            // Of WILDCARD, as libpmix 4.2.2 must be asked (pmix_connect_spawn.c): the own app's.
            long appSize = PMIx.get(Proc.wildcard(me.nspace()), "pmix.app.size").asLong();
            long jobSize = PMIx.get(Proc.wildcard(me.nspace()), "pmix.job.size").asLong();
            print(step, "OK", "appnum=" + appnum + " apprank=" + apprank + " app.size=" + appSize
                + " job.size=" + jobSize + " app=" + System.getenv("CS_APP") + " cwd="
                + Path.of("").toAbsolutePath() + " lang=java");
          }
          default -> throw new IllegalArgumentException("unknown step " + step);
        }
      } catch (PmixException e) {
        print(step, "FAIL", "status=" + e.status().code() + " " + e.status().name() + " "
            + e.getMessage());
        System.exit(1);
      }
    }
    PMIx.finalize();
    print("finalize", "OK", "");
    System.exit(0);
  }

  /**
   * An app of {@code spec} ({@code N CMD ARGS...}) that runs the step {@code app-info}, with
   * {@code CS_APP=label} in its environment, in {@code cwd} (null: the client fills in its own).
   */
  private static Value.App app(List<String> spec, String label, @Nullable String cwd) {
    int n = Integer.parseInt(spec.get(0));
    List<String> argv = new ArrayList<>(spec.subList(1, spec.size()));
    argv.add("app-info");
    return new Value.App(argv.get(0), argv, List.of("CS_APP=" + label), cwd, n, List.of());
  }

  /** The variable a spawning parent puts in its child's environment: the parent's namespace. */
  private static final String PEER_ENV = "CS_PEER_NS";

  private static final Info OPTIONAL = Info.of("pmix.optional", true);

  /**
   * Connects this namespace with {@code peer} (both whole), reads the peer's job size from what
   * this process now holds ({@code pmix.optional}: the connect reply for a namespace it never
   * saw), disconnects, and checks that the peer's job data is gone (the C client drops it).
   */
  private static void connectPeer(Proc me, String peer) {
    List<Proc> both = List.of(Proc.wildcard(me.nspace()), Proc.wildcard(peer));
    PMIx.connect(both);
    int size = PMIx.get(Proc.wildcard(peer), "pmix.job.size", OPTIONAL).asInt();
    print("connect-peer", "OK", "peer=" + peer + " peer.size=" + size);
    PMIx.disconnect(both);
    try {
      Value v = PMIx.get(Proc.wildcard(peer), "pmix.job.size", OPTIONAL);
      print("disconnect-peer", "FAIL", "still holds the peer's job size " + v);
      System.exit(1);
    } catch (PmixException e) {
      print("disconnect-peer", "OK", "dropped status=" + e.status().code());
    }
  }

  /**
   * Where rank 0 says it is about to connect: a file named after the namespace in the server's
   * temporary directory ({@code PMIX_SERVER_TMPDIR}, which both our server and mpirun give their
   * processes; else java.io.tmpdir). {@code pmix_connect_spawn.c} uses the same name.
   */
  private static Path marker(Proc me) {
    String dir = System.getenv("PMIX_SERVER_TMPDIR");
    return Path.of(dir != null ? dir : System.getProperty("java.io.tmpdir"),
        "cs-" + me.nspace() + ".connecting");
  }

  /** Waits (at most 60 s) for rank 0's marker, then a second more: it is in its connect then. */
  private static void awaitMarker(Path marker) throws InterruptedException {
    long end = System.nanoTime() + 60_000_000_000L;
    while (!Files.exists(marker) && System.nanoTime() - end < 0) {
      Thread.sleep(20);
    }
    Thread.sleep(1000);
  }

  private static void print(String step, String verdict, String detail) {
    System.out.println(("CS " + rank + " " + step + " " + verdict + " " + detail).strip());
    System.out.flush();
  }
}
