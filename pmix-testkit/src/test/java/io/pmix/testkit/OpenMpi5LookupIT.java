package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Open MPI 5.0.10's {@code MPI_Publish_name}/{@code MPI_Lookup_name}/{@code MPI_Unpublish_name}
 * with {@code MPI_INFO_NULL} under {@code bin/pmixrun} (issue #16): Open MPI 5 sends an
 * uninitialised PMIX_RANGE with the lookup, which the data store must take as the session range
 * (as PRRTE does) rather than refuse (MPI_ERR_NAME on every run before).
 */
@ExtendWith(PmixTestExtension.class)
class OpenMpi5LookupIT {
  @Test
  void publishAndLookupWithMpiInfoNull() throws Exception {
    Path exe =
        Peers.ompiCompile(
            Path.of(System.getProperty("basedir", ".")).resolve("src/test/c/mpi_check.c"));
    String opal = Peers.dir().resolve("ompi-5.0.10").toString();
    PmixRunProcess p =
        PmixRunProcess.run(Duration.ofMinutes(2), "-n", "2", "--timeout", "100", "-x",
            "LD_LIBRARY_PATH=" + Peers.ompiLibraryPath(), "-x", "OPAL_PREFIX=" + opal, "--",
            exe.toString(), "--publish");
    assertEquals(0, p.exit(), p::describe);
    String out = p.stdout();
    assertTrue(out.contains("rank 1 lookup ok "), p::describe);
    assertTrue(out.contains("rank 0 unpublished"), p::describe);
    assertTrue(out.contains("rank 0 done") && out.contains("rank 1 done"), p::describe);
  }
}
