package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/** The extension fails tests that leave processes behind, and decides about missing toolchains. */
class PmixTestExtensionIT {

  private static Map<String, TestExecutionResult> runScenario(String method) {
    System.setProperty("pmix.testkit.scenarios", "true");
    try {
      LauncherDiscoveryRequest req =
          LauncherDiscoveryRequestBuilder.request()
              .selectors(selectMethod(ExtensionScenarios.class, scenario(method)))
              .filters(EngineFilter.includeEngines("junit-jupiter"))
              .build();
      Map<String, TestExecutionResult> results = new HashMap<>();
      Launcher launcher = LauncherFactory.create();
      launcher.execute(
          req,
          new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
              if (id.isTest()) {
                results.put(id.getDisplayName(), result);
              }
            }

            @Override
            public void executionSkipped(TestIdentifier id, String reason) {
              results.put(id.getDisplayName(), TestExecutionResult.aborted(null));
            }
          });
      return results;
    } finally {
      System.clearProperty("pmix.testkit.scenarios");
    }
  }

  private static java.lang.reflect.Method scenario(String name) {
    for (java.lang.reflect.Method m : ExtensionScenarios.class.getDeclaredMethods()) {
      if (m.getName().equals(name)) {
        return m;
      }
    }
    throw new AssertionError("no scenario " + name);
  }

  private static TestExecutionResult only(Map<String, TestExecutionResult> results) {
    assertEquals(1, results.size(), results::toString);
    return results.values().iterator().next();
  }

  private static void assertAllDead() throws Exception {
    assertFalse(ExtensionScenarios.PIDS.isEmpty());
    for (long pid : ExtensionScenarios.PIDS) {
      var h = ProcessHandle.of(pid);
      if (h.isPresent()) {
        h.get().onExit().get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
      }
    }
    ExtensionScenarios.PIDS.clear();
  }

  @Test
  void aJobLeftRunningFailsTheTestAndIsKilled() throws Exception {
    TestExecutionResult r = only(runScenario("leavesAJobRunning"));
    assertEquals(TestExecutionResult.Status.FAILED, r.getStatus(), r::toString);
    String msg = r.getThrowable().orElseThrow().getMessage();
    assertTrue(msg.contains("left things running") && msg.contains("job left running (killed)"),
        msg);
    assertAllDead();
  }

  @Test
  void aStrayChildFailsTheTestAndIsKilled() throws Exception {
    TestExecutionResult r = only(runScenario("leavesAChildProcessRunning"));
    assertEquals(TestExecutionResult.Status.FAILED, r.getStatus(), r::toString);
    String msg = r.getThrowable().orElseThrow().getMessage();
    assertTrue(msg.contains("process left running (killed): pid "), msg);
    assertAllDead();
  }

  @Test
  void aTidyTestPasses() {
    TestExecutionResult r = only(runScenario("cleansUpAfterItself"));
    assertEquals(TestExecutionResult.Status.SUCCESSFUL, r.getStatus(), r::toString);
  }

  @Test
  void aMissingToolchainSkipsOrFailsAsTheEnvironmentSays() {
    TestExecutionResult r = only(runScenario("lacksTheCToolchain"));
    if (PmixTestExtension.interopRequired()) {
      assertEquals(TestExecutionResult.Status.FAILED, r.getStatus(), r::toString);
      assertTrue(r.getThrowable().orElseThrow().getMessage().contains("interop is required"));
    } else {
      assertEquals(TestExecutionResult.Status.ABORTED, r.getStatus(), r::toString);
    }
  }
}
