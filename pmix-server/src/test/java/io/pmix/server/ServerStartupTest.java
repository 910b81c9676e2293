package io.pmix.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.io.File;
import java.net.InetAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

/**
 * A fresh JVM's server start, rehearsal and first client connection parse no annotation: adding
 * a Netty handler whose class is marked {@code @Sharable} or inherits Netty's {@code @Skip}-marked
 * event methods makes the JVM parse them and generate a proxy class per annotation type, ~13 ms of
 * a server's start before its first client is served ({@code internal.Acceptor}, {@code
 * PlainDecoder}, {@code PlainInboundHandler}; docs/architecture.md, "Start-up of pmixrun"). The
 * child JVM's class-load log shows both: a proxy's source is {@code __dynamic_proxy__}, and
 * parsing an annotation type loads {@code sun.reflect.annotation.AnnotationType}.
 */
@Timeout(120)
class ServerStartupTest {
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aServerStartsAndAcceptsItsFirstClientWithoutParsingAnnotations(boolean netty)
      throws Exception {
    String out = runChild(Boolean.toString(netty));
    // What the check looks for is there to be seen: the server's classes were logged.
    assertTrue(
        out.contains(
            netty
                ? "io.pmix.server.internal.Acceptor "
                : "io.pmix.server.internal.NativeTransport "),
        out);
    assertFalse(out.contains("__dynamic_proxy__"), out);
    assertFalse(out.contains("sun.reflect.annotation.AnnotationType "), out);
  }

  /**
   * Where pmix-java's native library does not load (here: an architecture it was not built for,
   * as the JVM reports it), the server runs on Netty's transport by itself and serves a client.
   */
  @Test
  void withoutTheNativeLibraryTheServerFallsBackToNettysTransport() throws Exception {
    String out = runChild("-Dos.arch=pmix-java-unbuilt", "false");
    assertTrue(out.contains("io.pmix.server.internal.Acceptor "), out);
    assertFalse(out.contains("io.pmix.server.internal.NativeTransport "), out);
  }

  /** Runs {@link Child} with {@code args} (JVM options, then its own); its output. */
  private static String runChild(String... args) throws Exception {
    String java =
        System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.add("-Xlog:class+load=info:stdout:none");
    for (int i = 0; i < args.length - 1; i++) {
      cmd.add(args[i]);
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Child.class.getName());
    cmd.add(args[args.length - 1]);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child did not end");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("MARK accepted status 0"), out);
    return out;
  }

  /** Starts a server, lets its rehearsal run, connects one client and ends. */
  static final class Child {
    private Child() {}

    public static void main(String[] args) throws Exception {
      PMIxServer server =
          PMIxServer.init(
              new HostModule() {},
              ServerOptions.builder().nettyTransport(Boolean.parseBoolean(args[0])).build());
      try {
        String nspace = "startup";
        check(server.registerNspace(nspace, 1, List.of(Info.of(Keys.JOB_SIZE, Value.uint32(1)))));
        check(server.registerClient(Proc.of(nspace, 0), Launched.myUid(), Launched.myGid()));
        // Queued after the rehearsal, so it has run.
        server.progressExecutor().submit(() -> {}).get(30, TimeUnit.SECONDS);
        int port = Integer.parseInt(server.uri().substring(server.uri().lastIndexOf(':') + 1));
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
          long reply = RawClients.handshake(s, nspace, 0);
          System.out.println("MARK accepted status " + (reply >>> 32));
        }
      } finally {
        server.close();
      }
    }

    private static void check(Status s) {
      if (!s.isSuccess() && !s.equals(Status.OPERATION_SUCCEEDED)) {
        throw new IllegalStateException("refused: " + s);
      }
    }
  }
}
