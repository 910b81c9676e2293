package io.pmix.testkit;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

import io.pmix.common.DataArray;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Value;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The job information a launcher registers for one job of {@code n} processes, all on this node,
 * of one or more applications: what an OpenPMIx 4.2.2 client expects to find (docs/commands.md §6,
 * and the registration of the C reference server {@code pmix_host_server.c}).
 *
 * <ul>
 *   <li>job: {@code pmix.univ.size}, {@code pmix.job.size}, {@code pmix.max.size}, {@code
 *       pmix.num.nodes}, {@code pmix.job.napps}, {@code pmix.nspace} (without it a 4.2.2
 *       client's get of {@code pmix.nspace} is NOT_FOUND), {@code pmix.jobid}, {@code pmix.nmap},
 *       {@code pmix.pmap}, {@code pmix.tmpdir}, {@code pmix.srv.nspace}, {@code pmix.srv.rank};
 *   <li>node array: {@code pmix.hname}, {@code pmix.nodeid}, {@code pmix.lpeers}, {@code
 *       pmix.local.size}, {@code pmix.node.size}, {@code pmix.lldr};
 *   <li>app array: {@code pmix.appnum}, {@code pmix.app.size}, {@code pmix.aldr}, {@code
 *       pmix.wdir};
 *   <li>per rank ({@code pmix.pdata}, rank first): {@code pmix.appnum}, {@code pmix.lrank},
 *       {@code pmix.nrank}, {@code pmix.nodeid}, {@code pmix.hname}, {@code pmix.grank}, {@code
 *       pmix.apprank}.
 * </ul>
 */
final class JobInfo {
  private JobInfo() {}

  /**
   * One application of a job: its processes take the next {@code nprocs} ranks.
   *
   * @param nprocs how many processes run it (at least one)
   * @param wdir its working directory
   * @param argv its command line as PRRTE registers it ({@code pmix.app.argv}: the arguments
   *     joined with spaces), or null to register none (the launcher's own jobs, whose data
   *     predates this key)
   */
  record App(int nprocs, Path wdir, @Nullable String argv) {
    App {
      checkArgument(nprocs >= 1, "an app has at least one process: %s", nprocs);
      requireNonNull(wdir, "wdir");
    }
  }

  /**
   * The registration of a single-node, single-app job.
   *
   * @param nspace the job's namespace, also its job id
   * @param n the number of processes (ranks 0 to n-1)
   * @param hostname this node's name
   * @param tmpdir the job's temporary directory
   * @param wdir the application's working directory
   * @param serverNspace the server's namespace
   * @param serverRank the server's rank
   */
  static List<Info> singleNode(
      String nspace,
      int n,
      String hostname,
      Path tmpdir,
      Path wdir,
      String serverNspace,
      int serverRank) {
    checkArgument(n >= 1, "a job has at least one process: %s", n);
    return singleNode(
        nspace, List.of(new App(n, wdir, null)), hostname, tmpdir, serverNspace, serverRank);
  }

  /**
   * The registration of a single-node job of one or more apps, ranked as PRRTE ranks a
   * multi-app job: app 0's processes first, then app 1's, and so on; each rank's {@code
   * pmix.appnum} and {@code pmix.apprank} (its position within its app), one app array per app
   * ({@code pmix.app.size}, {@code pmix.aldr} its first rank, {@code pmix.wdir}, and {@code
   * pmix.app.argv} when given), {@code pmix.job.napps} the number of apps.
   *
   * @param nspace the job's namespace, also its job id
   * @param apps the apps, in app-number order
   * @param hostname this node's name
   * @param tmpdir the job's temporary directory
   * @param serverNspace the server's namespace
   * @param serverRank the server's rank
   */
  static List<Info> singleNode(
      String nspace,
      List<App> apps,
      String hostname,
      Path tmpdir,
      String serverNspace,
      int serverRank) {
    requireNonNull(nspace, "nspace");
    requireNonNull(hostname, "hostname");
    checkArgument(!apps.isEmpty(), "a job has at least one app");
    int n = 0;
    for (App a : apps) {
      n = Math.addExact(n, a.nprocs());
    }
    StringBuilder peers = new StringBuilder();
    for (int r = 0; r < n; r++) {
      peers.append(r == 0 ? "" : ",").append(r);
    }
    List<Info> job = new ArrayList<>();
    job.add(Info.of(Keys.UNIV_SIZE, Value.uint32(n)));
    job.add(Info.of(Keys.JOB_SIZE, Value.uint32(n)));
    job.add(Info.of(Keys.MAX_PROCS, Value.uint32(n)));
    job.add(Info.of(Keys.NUM_NODES, Value.uint32(1)));
    job.add(Info.of(Keys.JOB_NUM_APPS, Value.uint32(apps.size())));
    job.add(Info.of(Keys.NSPACE, Value.of(nspace)));
    job.add(Info.of(Keys.JOBID, Value.of(nspace)));
    // raw: is valid for any name and is what 4.2.2 itself generates when native is not shorter.
    job.add(Info.of(Keys.NODE_MAP, Value.of("raw:" + hostname)));
    job.add(Info.of(Keys.PROC_MAP, Value.of("raw:" + peers)));
    job.add(Info.of(Keys.TMPDIR, Value.of(tmpdir.toString())));
    job.add(Info.of(Keys.SERVER_NSPACE, Value.of(serverNspace)));
    job.add(Info.of(Keys.SERVER_RANK, Value.rank(serverRank)));

    job.add(
        Info.of(
            Keys.NODE_INFO_ARRAY,
            DataArray.ofInfos(
                List.of(
                    Info.of(Keys.HOSTNAME, Value.of(hostname)),
                    Info.of(Keys.NODEID, Value.uint32(0)),
                    Info.of(Keys.LOCAL_PEERS, Value.of(peers.toString())),
                    Info.of(Keys.LOCAL_SIZE, Value.uint32(n)),
                    Info.of(Keys.NODE_SIZE, Value.uint32(n)),
                    Info.of(Keys.LOCALLDR, Value.rank(0))))));
    int first = 0;
    for (int a = 0; a < apps.size(); a++) {
      App app = apps.get(a);
      List<Info> arr = new ArrayList<>();
      arr.add(Info.of(Keys.APPNUM, Value.uint32(a)));
      arr.add(Info.of(Keys.APP_SIZE, Value.uint32(app.nprocs())));
      arr.add(Info.of(Keys.APPLDR, Value.rank(first)));
      arr.add(Info.of(Keys.WDIR, Value.of(app.wdir().toString())));
      if (app.argv() != null) {
        arr.add(Info.of(Keys.APP_ARGV, Value.of(app.argv())));
      }
      job.add(Info.of(Keys.APP_INFO_ARRAY, DataArray.ofInfos(arr)));
      first += app.nprocs();
    }
    int r = 0;
    for (int a = 0; a < apps.size(); a++) {
      for (int appRank = 0; appRank < apps.get(a).nprocs(); appRank++, r++) {
        job.add(
            Info.of(
                Keys.PROC_DATA,
                DataArray.ofInfos(
                    List.of(
                        Info.of(Keys.RANK, Value.rank(r)),
                        Info.of(Keys.APPNUM, Value.uint32(a)),
                        Info.of(Keys.LOCAL_RANK, Value.uint16(r)),
                        Info.of(Keys.NODE_RANK, Value.uint16(r)),
                        Info.of(Keys.NODEID, Value.uint32(0)),
                        Info.of(Keys.HOSTNAME, Value.of(hostname)),
                        Info.of(Keys.GLOBAL_RANK, Value.rank(r)),
                        Info.of(Keys.APP_RANK, Value.rank(appRank))))));
      }
    }
    return List.copyOf(job);
  }
}
