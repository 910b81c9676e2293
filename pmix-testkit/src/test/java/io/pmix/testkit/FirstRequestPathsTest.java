package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The code pmixrun's server runs for a client's requests links no call site at its first run: no
 * {@code invokedynamic} (a lambda, a method reference) in the methods of a client's cycle, from
 * its connection to its finalize, through the publish, lookup and unpublish that pmix-dataserver
 * serves. Such a call site's first execution costs a JDK 17 server 0.1-0.2 ms even with pmixrun's
 * class-data sharing archive (a class's ~0.01 ms), and a job runs most of these paths only a few
 * times, so that is what its clients wait for (issue #14; docs/architecture.md, "First
 * requests"). Also the parts of every job's start and end that were measured so (the dispatch,
 * the job data's build, the stores' registration, a namespace's removal; "Start-up of pmixrun").
 * A deterministic proxy, read from the compiled classes with {@code javap}: the times
 * themselves are {@code bin/bench-server}'s.
 */
@Timeout(60)
class FirstRequestPathsTest {
  /** The methods of a client's cycle, by class (nested classes count as classes of their own). */
  private static final Map<String, List<String>> PATHS =
      Map.ofEntries(
          Map.entry(
              "io.pmix.server.internal.PeerHandler", List.of("channelActive", "channelRead")),
          Map.entry(
              "io.pmix.server.internal.PeerSession",
              List.of("opened", "connectRequest", "frame", "decide")),
          Map.entry("io.pmix.server.internal.PeerSession$HandshakeDeadline", List.of("run")),
          Map.entry("io.pmix.server.internal.Acceptor", List.of("channelRead")),
          Map.entry("io.pmix.common.internal.wire.ConnectRequestCodec", List.of("decodePayload")),
          Map.entry("io.pmix.server.internal.PeerSession$Decision", List.of("accept")),
          Map.entry("io.pmix.server.internal.PeerSession$OwnerKnown", List.of("accept", "run")),
          Map.entry("io.pmix.server.internal.NettyConnection", List.of("of", "send")),
          Map.entry("io.pmix.server.internal.NativeTransport", List.of("accepted")),
          Map.entry("io.pmix.server.internal.NativeTransport$Listener", List.of("ready")),
          Map.entry(
              "io.pmix.server.internal.NativeTransport$Connection",
              List.of("ready", "read", "send", "flush", "close", "reportClosed")),
          Map.entry("io.pmix.server.internal.NativeTransport$Closed", List.of("run")),
          Map.entry("io.pmix.server.internal.InboundStream", List.of("feed", "complete", "begin")),
          Map.entry(
              "io.pmix.server.internal.net.ServerLoop",
              List.of("run", "execute", "schedule", "register", "deregister")),
          Map.entry("io.pmix.server.internal.Admission", List.of("acceptClient")),
          Map.entry("io.pmix.server.internal.ServerCore", List.of("frame", "dispatch", "handle")),
          Map.entry("io.pmix.server.internal.JobData", List.of("build", "jobLevelKvals")),
          Map.entry(
              "io.pmix.server.internal.gds.SharedStores",
              List.of("namespaceRegistered", "enqueue", "storeNow", "storeAll")),
          Map.entry("io.pmix.server.internal.gds.SharedStores$AddNamespace", List.of("run")),
          Map.entry("io.pmix.server.internal.collective.Groups", List.of("namespaceGone")),
          Map.entry("io.pmix.server.internal.HostCalls", List.of("call", "callHere")),
          Map.entry("io.pmix.server.internal.HostCalls$Upcall", List.of("run", "accept")),
          Map.entry("io.pmix.server.internal.HostCalls$Outcome", List.of("run")),
          Map.entry("io.pmix.server.internal.JobInfoResponder", List.of("handleReq")),
          Map.entry(
              "io.pmix.server.internal.Replies",
              List.of("status", "finalizeReply", "send", "write", "frame")),
          Map.entry(
              "io.pmix.server.internal.HostForwarding",
              List.of(
                  "handlePublish",
                  "handleLookup",
                  "handleUnpublish",
                  "withAuthenticatedIdentity",
                  "dataCall")),
          Map.entry("io.pmix.server.internal.collective.Collectives", List.of("arrive")),
          Map.entry("io.pmix.server.internal.modex.NamespaceData", List.of("procOrCreate")),
          Map.entry("io.pmix.server.internal.modex.Modex", List.of("handleGet")),
          Map.entry(
              "io.pmix.server.internal.modex.GetAnswers",
              List.of("satisfy", "answerJobLevel", "blob", "packValues", "completeForHost")),
          Map.entry("io.pmix.server.internal.modex.GetAnswers$Answer", List.of("get")),
          Map.entry("io.pmix.server.internal.modex.PendingGets", List.of("dropGetsOf", "park")),
          Map.entry("io.pmix.server.internal.modex.PendingGets$LocalWaitExpiry", List.of("run")),
          Map.entry("io.pmix.server.internal.lifecycle.PeerLifecycle", List.of("handleFinalize")),
          Map.entry("io.pmix.server.internal.Monitors", List.of("forget")),
          Map.entry(
              "io.pmix.server.internal.events.IofRegistry", List.of("forget", "namespaceGone")),
          Map.entry("io.pmix.server.internal.events.NotificationCache", List.of("forgetTarget")),
          Map.entry(
              "io.pmix.dataserver.DataServiceHostModule",
              List.of("publish", "lookup", "unpublish")),
          Map.entry(
              "io.pmix.dataserver.LocalDataService",
              List.of("publish", "lookup", "unpublish", "procEnded", "appEnded", "run", "call")),
          Map.entry("io.pmix.dataserver.LocalDataService$Lookup", List.of("run", "accept")),
          Map.entry("io.pmix.dataserver.LocalDataService$Call", List.of("run")),
          Map.entry("io.pmix.dataserver.DataStore", List.of("procEnded", "appEnded", "<clinit>")));

  @Test
  void aClientsCycleLinksNoCallSiteInTheServer() {
    List<String> linking = new ArrayList<>();
    for (Map.Entry<String, List<String>> e : PATHS.entrySet()) {
      Map<String, Boolean> methods = invokedynamicByMethod(e.getKey());
      for (String m : e.getValue()) {
        Boolean links = methods.get(m);
        assertNotNull(links, e.getKey() + " has no method " + m + " (renamed? update PATHS)");
        if (links) {
          linking.add(e.getKey() + "." + m);
        }
      }
    }
    assertEquals(
        List.of(),
        linking,
        "a lambda, method reference or other invokedynamic on a client's request path: use a"
            + " class (docs/architecture.md, \"First requests\")");
  }

  @Test
  void theReadingSeesALambda() {
    Map<String, Boolean> methods = invokedynamicByMethod(FirstRequestPathsTest.class.getName());
    assertEquals(Boolean.TRUE, methods.get("withLambda"));
    assertEquals(Boolean.FALSE, methods.get("withClass"));
  }

  /** A method holding a lambda: {@link #theReadingSeesALambda}'s control. */
  @SuppressWarnings("unused")
  private static Runnable withLambda(StringBuilder b) {
    return () -> b.append('x');
  }

  /** The same without one. */
  @SuppressWarnings("unused")
  private static Runnable withClass(StringBuilder b) {
    return new Runnable() {
      @Override
      public void run() {
        b.append('x');
      }
    };
  }

  /** Each method of {@code className} (overloads merged): whether it has an invokedynamic. */
  private static Map<String, Boolean> invokedynamicByMethod(String className) {
    ToolProvider javap = ToolProvider.findFirst("javap").orElseThrow();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int rc =
        javap.run(
            new PrintWriter(out),
            new PrintWriter(err),
            "-c",
            "-p",
            "-cp",
            System.getProperty("java.class.path"),
            className);
    assertEquals(0, rc, "javap " + className + ": " + err);
    Map<String, Boolean> byMethod = new HashMap<>();
    String current = null;
    for (String line : out.toString().split("\n")) {
      // A member's declaration is indented by two spaces; its code by more.
      if (line.startsWith("  ") && !line.startsWith("   ")) {
        if (line.contains("(")) {
          String head = line.substring(0, line.indexOf('('));
          current = head.substring(head.lastIndexOf(' ') + 1);
          byMethod.putIfAbsent(current, false);
        } else {
          current = line.trim().startsWith("static {}") ? "<clinit>" : null; // else a field
          if (current != null) {
            byMethod.putIfAbsent(current, false);
          }
        }
      } else if (current != null && line.contains(": invokedynamic ")) {
        byMethod.put(current, true);
      }
    }
    assertTrue(!byMethod.isEmpty(), "javap printed no method of " + className);
    return byMethod;
  }
}
