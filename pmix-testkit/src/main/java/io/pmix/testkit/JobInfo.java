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

/**
 * The job information a launcher registers for one job of {@code n} processes, all on this node,
 * one application: what an OpenPMIx 4.2.2 client expects to find (commands.md section 6, and the
 * registration of the C reference server {@code pmix_host_server.c}).
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
    requireNonNull(nspace, "nspace");
    requireNonNull(hostname, "hostname");
    checkArgument(n >= 1, "a job has at least one process: %s", n);
    StringBuilder peers = new StringBuilder();
    for (int r = 0; r < n; r++) {
      peers.append(r == 0 ? "" : ",").append(r);
    }
    List<Info> job = new ArrayList<>();
    job.add(Info.of(Keys.UNIV_SIZE, Value.uint32(n)));
    job.add(Info.of(Keys.JOB_SIZE, Value.uint32(n)));
    job.add(Info.of(Keys.MAX_PROCS, Value.uint32(n)));
    job.add(Info.of(Keys.NUM_NODES, Value.uint32(1)));
    job.add(Info.of(Keys.JOB_NUM_APPS, Value.uint32(1)));
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
    job.add(
        Info.of(
            Keys.APP_INFO_ARRAY,
            DataArray.ofInfos(
                List.of(
                    Info.of(Keys.APPNUM, Value.uint32(0)),
                    Info.of(Keys.APP_SIZE, Value.uint32(n)),
                    Info.of(Keys.APPLDR, Value.rank(0)),
                    Info.of(Keys.WDIR, Value.of(wdir.toString()))))));
    for (int r = 0; r < n; r++) {
      job.add(
          Info.of(
              Keys.PROC_DATA,
              DataArray.ofInfos(
                  List.of(
                      Info.of(Keys.RANK, Value.rank(r)),
                      Info.of(Keys.APPNUM, Value.uint32(0)),
                      Info.of(Keys.LOCAL_RANK, Value.uint16(r)),
                      Info.of(Keys.NODE_RANK, Value.uint16(r)),
                      Info.of(Keys.NODEID, Value.uint32(0)),
                      Info.of(Keys.HOSTNAME, Value.of(hostname)),
                      Info.of(Keys.GLOBAL_RANK, Value.rank(r)),
                      Info.of(Keys.APP_RANK, Value.rank(r))))));
    }
    return List.copyOf(job);
  }
}
