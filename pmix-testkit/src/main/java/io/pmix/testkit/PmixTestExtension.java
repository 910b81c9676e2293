package io.pmix.testkit;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * JUnit 5 support for {@link TestingPmixServer}: servers made through it are closed after each
 * test, and the test <em>fails</em> if it left a job or any other child process running (they are
 * killed first), as grpc's {@code GrpcCleanupRule} fails a test that leaks a channel.
 *
 * <p>Two ways to use it:
 *
 * <pre>{@code
 * class MyIT {
 *   @RegisterExtension final PmixTestExtension pmix = new PmixTestExtension();
 *
 *   @Test void fence() {
 *     JobResult r = pmix.server().job(4).cProgram(Path.of("src/test/c/fence.c"))
 *         .run(Duration.ofSeconds(60));
 *     assertTrue(r.succeeded(), r::describe);
 *   }
 * }
 *
 * @ExtendWith(PmixTestExtension.class)
 * class OtherIT {
 *   @Test void echo(TestingPmixServer pmix) { ... }   // a fresh server per test
 * }
 * }</pre>
 *
 * <p>It also decides what a missing C toolchain means: a {@link CToolchainUnavailableException}
 * thrown by a test or a {@code @BeforeAll}/{@code @BeforeEach} method <em>skips</em> the test on
 * a developer machine and <em>fails</em> it where interop is required (environment {@code
 * CI=true} or system property {@code pmix.interop.required=true}).
 *
 * <p>"Any other child process": children of this JVM that appeared during the test (a {@code
 * pmixrun} started with {@code ProcessBuilder}, say) and still run after it. Processes that
 * already left the JVM's tree (orphans of a child that exited) cannot be seen. Assumes tests of
 * one JVM do not run in parallel. A server made in a {@code static} context (e.g. {@code
 * @BeforeAll}) is closed after all tests of the class.
 */
public final class PmixTestExtension
    implements BeforeEachCallback,
        AfterEachCallback,
        AfterAllCallback,
        ParameterResolver,
        TestExecutionExceptionHandler,
        LifecycleMethodExecutionExceptionHandler {

  @GuardedBy("this")
  private final List<TestingPmixServer> perTest = new ArrayList<>();

  @GuardedBy("this")
  private final List<TestingPmixServer> perClass = new ArrayList<>();

  @GuardedBy("this")
  private final List<AutoCloseable> resources = new ArrayList<>();

  @GuardedBy("this")
  private Set<Long> childrenBefore = Set.of();

  @GuardedBy("this")
  private boolean inTest;

  /** An extension to register with {@code @RegisterExtension} (or {@code @ExtendWith}). */
  public PmixTestExtension() {}

  /**
   * A server with the defaults for the current test (the same one for every call within a test),
   * closed after it.
   */
  public synchronized TestingPmixServer server() {
    List<TestingPmixServer> l = inTest ? perTest : perClass;
    if (l.isEmpty()) {
      l.add(TestingPmixServer.start());
    }
    return l.get(0);
  }

  /** A new server with other settings, closed after the current test. */
  public TestingPmixServer newServer(Consumer<TestingPmixServer.Builder> settings) {
    TestingPmixServer.Builder b = TestingPmixServer.builder();
    settings.accept(b);
    TestingPmixServer s = b.build();
    synchronized (this) {
      (inTest ? perTest : perClass).add(s);
    }
    return s;
  }

  /** Closes {@code resource} after the current test, before the servers. */
  @CanIgnoreReturnValue
  public synchronized <T extends AutoCloseable> T register(T resource) {
    resources.add(requireNonNull(resource, "resource"));
    return resource;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    Set<Long> now = children();
    synchronized (this) {
      inTest = true;
      childrenBefore = now;
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    List<TestingPmixServer> servers;
    List<AutoCloseable> res;
    Set<Long> before;
    synchronized (this) {
      inTest = false;
      servers = new ArrayList<>(perTest);
      perTest.clear();
      res = new ArrayList<>(resources);
      resources.clear();
      before = childrenBefore;
    }
    List<String> problems = new ArrayList<>();
    for (int i = res.size() - 1; i >= 0; i--) {
      try {
        res.get(i).close();
      } catch (Exception e) {
        problems.add("closing " + res.get(i) + " failed: " + e);
      }
    }
    for (TestingPmixServer s : servers) {
      for (String left : s.shutdown()) {
        problems.add("job left running (killed): " + left);
      }
    }
    for (ProcessHandle h : strays(before)) {
      problems.add(
          "process left running (killed): pid " + h.pid() + " " + h.info().commandLine().orElse(""));
      h.descendants().forEach(ProcessHandle::destroyForcibly);
      h.destroyForcibly();
    }
    if (!problems.isEmpty()) {
      Assertions.fail(context.getDisplayName() + " left things running:\n  "
          + String.join("\n  ", problems));
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    List<TestingPmixServer> servers;
    synchronized (this) {
      servers = new ArrayList<>(perClass);
      perClass.clear();
    }
    List<String> problems = new ArrayList<>();
    for (TestingPmixServer s : servers) {
      for (String left : s.shutdown()) {
        problems.add("job left running (killed): " + left);
      }
    }
    if (!problems.isEmpty()) {
      Assertions.fail(context.getDisplayName() + " left things running:\n  "
          + String.join("\n  ", problems));
    }
  }

  private static Set<Long> children() {
    Set<Long> s = new HashSet<>();
    ProcessHandle.current().children().forEach(h -> s.add(h.pid()));
    return s;
  }

  /** Children of this JVM born during the test and still alive after a short grace. */
  private static List<ProcessHandle> strays(Set<Long> before) {
    List<ProcessHandle> l = new ArrayList<>();
    ProcessHandle.current()
        .children()
        .filter(h -> !before.contains(h.pid()))
        .forEach(l::add);
    List<ProcessHandle> alive = new ArrayList<>();
    for (ProcessHandle h : l) {
      // A child that is exiting right now (its parent's waitFor just returned) is no stray.
      try {
        h.onExit().get(200, TimeUnit.MILLISECONDS);
      } catch (Exception e) {
        if (h.isAlive()) {
          alive.add(h);
        }
      }
    }
    return alive;
  }

  // ---- parameters ----

  @Override
  public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
    return p.getParameter().getType() == TestingPmixServer.class;
  }

  @Override
  public Object resolveParameter(ParameterContext p, ExtensionContext e) {
    return server();
  }

  // ---- a missing C toolchain ----

  /** Whether a missing C toolchain must fail tests rather than skip them. */
  public static boolean interopRequired() {
    return "true".equals(System.getenv("CI"))
        || "true".equals(System.getProperty("pmix.interop.required"));
  }

  private static Throwable translate(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof CToolchainUnavailableException) {
        if (interopRequired()) {
          return new AssertionError(
              c.getMessage() + " (interop is required here: CI=true or pmix.interop.required=true)",
              c);
        }
        try {
          Assumptions.abort(c.getMessage());
        } catch (RuntimeException | Error aborted) {
          return aborted;
        }
      }
    }
    return t;
  }

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    throw translate(t);
  }

  @Override
  public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    throw translate(t);
  }

  @Override
  public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    throw translate(t);
  }
}
