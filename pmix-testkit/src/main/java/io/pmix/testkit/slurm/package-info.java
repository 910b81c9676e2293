/**
 * A real single-node Slurm for tests ({@link io.pmix.testkit.slurm.SingleNodeSlurm}), shared by
 * a JVM's tests through {@link io.pmix.testkit.slurm.SlurmExtension}: tasks started by {@code
 * srun --mpi=pmix} get Slurm's own PMIx server (libpmix inside slurmstepd), the server most HPC
 * users meet.
 */
@CheckReturnValue
package io.pmix.testkit.slurm;

import com.google.errorprone.annotations.CheckReturnValue;
