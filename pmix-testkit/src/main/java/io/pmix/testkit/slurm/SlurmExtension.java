package io.pmix.testkit.slurm;

import io.pmix.testkit.PmixTestExtension;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension giving tests one {@link SingleNodeSlurm} per test JVM: started by the first
 * test that asks for it (a {@code SingleNodeSlurm} parameter of a test or lifecycle method),
 * shared by every later one, and stopped when the JVM's test run ends, so a suite starts the
 * daemons once and leaves nothing running.
 *
 * <p>Its files go under {@code target/slurm} of the module (system property {@code basedir},
 * which Surefire and Failsafe set). A machine without Slurm or root skips the test, or fails it
 * where interop is required ({@link PmixTestExtension#interopRequired()}).
 */
public final class SlurmExtension implements ParameterResolver {
  private static final ExtensionContext.Namespace NS =
      ExtensionContext.Namespace.create(SlurmExtension.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  /** Closes the shared cluster when JUnit closes the root store. */
  private record Shared(SingleNodeSlurm slurm) implements ExtensionContext.Store.CloseableResource {
    @Override
    public void close() {
      slurm.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
    return p.getParameter().getType() == SingleNodeSlurm.class;
  }

  @Override
  public Object resolveParameter(ParameterContext p, ExtensionContext e) {
    return shared(e);
  }

  /** The JVM's cluster, started on first use. */
  public static SingleNodeSlurm shared(ExtensionContext context) {
    try {
      return context
          .getRoot()
          .getStore(NS)
          .getOrComputeIfAbsent(
              "slurm",
              k -> new Shared(SingleNodeSlurm.start(directory(), START_TIMEOUT)),
              Shared.class)
          .slurm();
    } catch (SlurmUnavailableException e) {
      if (PmixTestExtension.interopRequired()) {
        throw new AssertionError(
            e.getMessage() + " (interop is required here: CI=true or pmix.interop.required=true)",
            e);
      }
      Assumptions.abort(e.getMessage());
      throw e; // not reached
    }
  }

  private static Path directory() {
    return Path.of(System.getProperty("basedir", ".")).resolve("target").resolve("slurm");
  }
}
