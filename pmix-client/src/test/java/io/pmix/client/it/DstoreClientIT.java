package io.pmix.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.pmix.common.internal.wire.ConnectRequest;
import io.pmix.common.internal.wire.ConnectRequestCodec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Java clients on libpmix 4.2.2's shared-memory stores, under the real C host server with its
 * default gds selection ({@code PMIX_GDS_MODULE=ds21,ds12,hash} for its children) or with ds12
 * only, next to C clients (pmix_client_check.c) that choose the same module: the Java client must
 * choose it as they do, announce it as they do, and read the job data and the C ranks' modex data
 * from it (docs/gds.md). libpmix 4.2.2 keeps one gds module per namespace, the one the last
 * connecting client announced, so a Java client announcing another one loses the job's data.
 */
class DstoreClientIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(3);

  /** pmix_client_check's steps matching ClientMain's init, cput, commit, fence-collect, cpeers. */
  private static final String C_STEPS =
      "--strict-scope --init --put --commit --fence-collect --get-peers --fence --finalize";

  private static final List<String> JAVA_STEPS =
      List.of("init", "cput", "commit", "fence-collect", "cpeers", "fence", "finalize");

  @BeforeAll
  static void build() {
    var unused = HostServerRun.hostServer();
    var unused2 = HostServerRun.cClient();
  }

  /** Four ranks, Java on the even ones: everything through ds21, as the C ranks use it. */
  @Test
  void mixedJobOnDs21(@TempDir Path dir) throws Exception {
    HostServerRun run =
        mixed(dir, 4, List.of("--gds", "default"), JAVA_STEPS, C_STEPS, "");
    assertMixedOk(run, 4, "ds21");
  }

  /** The same with the server offering ds12 and hash only (a ds12 reader lock, other records). */
  @Test
  void mixedJobOnDs12(@TempDir Path dir) throws Exception {
    HostServerRun run = mixed(dir, 4, List.of("--gds", "ds12,hash"), JAVA_STEPS, C_STEPS, "");
    assertMixedOk(run, 4, "ds12");
  }

  /**
   * The Java rank gets the C rank's keys before the C rank has committed them: the store has
   * none, so the Java client asks the server, which parks the request until the commit and then
   * answers it (a parked request is answered with the rank's data as the server's hash module
   * packs it, LOCAL keys included: 224 bytes here; docs/gds.md section 3); the later gets of that
   * rank find their keys in the store or in that answer. Every value must be the C rank's.
   */
  @Test
  void getsBeforeTheCommitAreAnsweredFromTheStoreAfterTheServer(@TempDir Path dir)
      throws Exception {
    HostServerRun run =
        mixed(
            dir,
            2,
            List.of("--gds", "default"),
            List.of("init", "cpeers-early", "cput", "commit", "fence-collect", "fence", "finalize"),
            "--init --sleep 1500 --put --commit --fence-collect --get-peers --fence --finalize",
            "");
    run.assertSuccess();
    assertEquals("ds21", run.values(0, "init").get("gds"), run::describe);
    // Rank 1's LOCAL string and bool, and its three GLOBAL keys.
    assertEquals("5", run.values(0, "cpeers-early").get("gets"), run::describe);
    assertTrue(
        run.lines.stream().anyMatch(l -> l.startsWith("STEP get-peers OK")), run::describe);
    assertTrue(run.lines.stream().noneMatch(l -> l.contains(" FAIL ")), run::describe);
  }

  /**
   * The connect request the Java client sends on ds21 is the C client's, field for field (its
   * library version string and the info blob after the gds name excepted): the same security
   * module and credential, kind, identity (namespace, rank), bfrops module, buffer type and the
   * gds name {@code ds21}, the same bytes, through a proxy that records both.
   */
  @Test
  void theHandshakeAnnouncesTheModuleAsTheCClientDoes(@TempDir Path dir) throws Exception {
    Path uriFile = dir.resolve("server.uri");
    try (Proxy proxy = new Proxy(uriFile)) {
      String redirect =
          "echo \"$PMIX_SERVER_URI41\" > " + quote(uriFile.toString()) + "\n"
              + "for v in PMIX_SERVER_URI41 PMIX_SERVER_URI4 PMIX_SERVER_URI3 PMIX_SERVER_URI2"
              + " PMIX_SERVER_URI21; do eval \"u=\\${$v:-}\"; [ -n \"$u\" ] && export"
              + " \"$v=${u%%;*};tcp4://127.0.0.1:" + proxy.port() + "\"; done\n";
      HostServerRun run =
          mixed(dir, 2, List.of("--gds", "default"), JAVA_STEPS, C_STEPS, redirect);
      assertMixedOk(run, 2, "ds21");
      List<byte[]> sent = proxy.firstMessages();
      assertEquals(2, sent.size(), run::describe);
      ConnectRequest a = decode(sent.get(0));
      ConnectRequest b = decode(sent.get(1));
      ConnectRequest java = a.rank().getAsInt() == 0 ? a : b;
      ConnectRequest c = a.rank().getAsInt() == 0 ? b : a;
      assertEquals("ds21", c.gdsModule(), c::toString);
      assertEquals(c.gdsModule(), java.gdsModule());
      assertEquals(c.psecModule(), java.psecModule());
      assertTrue(Arrays.equals(c.credential(), java.credential()), java + " vs " + c);
      assertEquals(c.kind(), java.kind());
      assertEquals(c.nspace(), java.nspace());
      assertEquals(c.bfropsModule(), java.bfropsModule());
      assertEquals(c.bufferType(), java.bufferType());
      // The bytes of the gds field where the C client has them: the bfrops module, the buffer
      // type, then the name with its NUL.
      ByteArrayOutputStream field = new ByteArrayOutputStream();
      field.writeBytes(c.bfropsModule().getBytes(StandardCharsets.US_ASCII));
      field.write(0);
      field.write(c.bufferType());
      field.writeBytes("ds21".getBytes(StandardCharsets.US_ASCII));
      field.write(0);
      for (byte[] m : sent) {
        assertTrue(indexOf(m, field.toByteArray()) > 0, "no gds field in " + Arrays.toString(m));
      }
    }
  }

  private static void assertMixedOk(HostServerRun run, int n, String gds) {
    run.assertSuccess();
    for (int r = 0; r < n; r += 2) {
      assertEquals(gds, run.values(r, "init").get("gds"), run::describe);
      // Every other rank's in-scope keys (own rank's too): two LOCAL and three GLOBAL each.
      assertEquals(Integer.toString(5 * n), run.values(r, "cpeers").get("gets"), run::describe);
      var unused = run.ok(r, "finalize");
    }
    long cOk =
        run.lines.stream().filter(l -> l.startsWith("STEP get-peers OK")).count();
    assertEquals(n / 2, cOk, run::describe);
    assertTrue(run.lines.stream().noneMatch(l -> l.contains(" FAIL ")), run::describe);
  }

  /**
   * A job of {@code n} ranks under the C host server: ClientMain with {@code java} on the even
   * ranks, pmix_client_check with {@code c} on the odd ones, {@code prelude} (shell) run first.
   */
  private static HostServerRun mixed(
      Path dir, int n, List<String> serverArgs, List<String> java, String c, String prelude)
      throws IOException, InterruptedException {
    String quotedJava =
        HostServerRun.javaClient(java.toArray(String[]::new)).stream()
            .map(DstoreClientIT::quote)
            .collect(Collectors.joining(" "));
    Path script = dir.resolve("rank.sh");
    Files.writeString(
        script,
        "#!/bin/sh\n"
            + prelude
            + "if [ $((PMIX_RANK % 2)) = 0 ]; then exec "
            + quotedJava
            + "; else exec "
            + quote(HostServerRun.cClient().toString())
            + " "
            + c
            + "; fi\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
    return HostServerRun.run(n, serverArgs, List.of(script.toString()), TIMEOUT);
  }

  private static ConnectRequest decode(byte[] message) {
    ByteBuffer header = ByteBuffer.wrap(message, 0, 16);
    int length = header.order(ByteOrder.LITTLE_ENDIAN).getInt(8);
    return ConnectRequestCodec.decodePayload(Unpooled.wrappedBuffer(message, 16, length));
  }

  private static int indexOf(byte[] hay, byte[] needle) {
    for (int i = 0; i + needle.length <= hay.length; i++) {
      if (Arrays.equals(hay, i, i + needle.length, needle, 0, needle.length)) {
        return i;
      }
    }
    return -1;
  }

  private static String quote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }

  /**
   * A TCP proxy in front of the C host server: forwards both ways and keeps the first message
   * (header and payload of the connect request) of each connection. Thread-safe.
   */
  private static final class Proxy implements AutoCloseable {
    private final ServerSocket listener =
        new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final List<ByteArrayOutputStream> firsts = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final Path uriFile;
    private final Thread acceptor = new Thread(this::accept, "dstore-it-proxy");

    /** A proxy to the server whose URI the ranks write into {@code uriFile} before connecting. */
    Proxy(Path uriFile) throws IOException {
      this.uriFile = uriFile;
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return listener.getLocalPort();
    }

    synchronized List<byte[]> firstMessages() {
      List<byte[]> out = new ArrayList<>();
      for (ByteArrayOutputStream b : firsts) {
        out.add(b.toByteArray());
      }
      return out;
    }

    private void accept() {
      while (!listener.isClosed()) {
        try {
          Socket client = listener.accept();
          String uri = Files.readString(uriFile).strip();
          int port = Integer.parseInt(uri.substring(uri.lastIndexOf(':') + 1));
          Socket server = new Socket(InetAddress.getLoopbackAddress(), port);
          ByteArrayOutputStream first = new ByteArrayOutputStream();
          synchronized (this) {
            firsts.add(first);
            sockets.add(client);
            sockets.add(server);
          }
          pump(client.getInputStream(), server.getOutputStream(), first);
          pump(server.getInputStream(), client.getOutputStream(), null);
        } catch (IOException e) {
          // closed
        }
      }
    }

    private void pump(InputStream in, OutputStream out, ByteArrayOutputStream first) {
      Thread t =
          new Thread(
              () -> {
                byte[] buf = new byte[65536];
                long seen = 0;
                long want = -1;
                try {
                  for (int n; (n = in.read(buf)) > 0; ) {
                    if (first != null && (want < 0 || seen < want)) {
                      synchronized (Proxy.this) {
                        first.write(buf, 0, n);
                      }
                      seen += n;
                      if (want < 0 && seen >= 16) {
                        byte[] h = first.toByteArray();
                        want = 16 + ByteBuffer.wrap(h, 0, 16).order(ByteOrder.LITTLE_ENDIAN)
                            .getInt(8);
                      }
                    }
                    out.write(buf, 0, n);
                    out.flush();
                  }
                } catch (IOException e) {
                  // one side closed
                } finally {
                  try {
                    out.close();
                  } catch (IOException e) {
                    // already closed
                  }
                }
              },
              "dstore-it-pump");
      t.setDaemon(true);
      t.start();
    }

    @Override
    public synchronized void close() throws IOException {
      listener.close();
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
