package io.pmix.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A TCP proxy in front of a PMIx server for tests: clients pointed at it (their {@code
 * PMIX_SERVER_URI*} rewritten to {@link #uri}) talk to the server through it, and every byte they
 * send is recorded, the wire as the client library wrote it. Thread-safe; {@link #close} stops it.
 */
final class RecordingProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  /** What each client connection sent, in the order they were accepted. */
  private final List<ByteArrayOutputStream> sent = new ArrayList<>();
  private final List<Socket> sockets = new ArrayList<>();
  private final Thread acceptor;

  /** A proxy to the server of {@code serverUri} ({@code <nspace>.<rank>;tcp4://HOST:PORT}). */
  RecordingProxy(String serverUri) throws IOException {
    String addr = serverUri.substring(serverUri.indexOf("tcp4://") + "tcp4://".length());
    int colon = addr.lastIndexOf(':');
    target = new InetSocketAddress(addr.substring(0, colon), Integer.parseInt(addr.substring(colon + 1)));
    listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    acceptor = new Thread(this::accept, "recording-proxy");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** The server URI with this proxy's port: what the clients are to use. */
  String uri(String serverUri) {
    String head = serverUri.substring(0, serverUri.indexOf("tcp4://"));
    return head + "tcp4://127.0.0.1:" + listener.getLocalPort();
  }

  /** What each client connection sent so far, in the order they were accepted. */
  synchronized List<byte[]> sent() {
    List<byte[]> out = new ArrayList<>();
    for (ByteArrayOutputStream b : sent) {
      out.add(b.toByteArray());
    }
    return out;
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(target.getAddress(), target.getPort());
        ByteArrayOutputStream mine = new ByteArrayOutputStream();
        synchronized (this) {
          sockets.add(client);
          sockets.add(server);
          sent.add(mine);
        }
        pump(client.getInputStream(), server.getOutputStream(), mine, server);
        pump(server.getInputStream(), client.getOutputStream(), null, client);
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void pump(
      InputStream in, OutputStream out, @Nullable ByteArrayOutputStream record, Socket peer) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[8192];
              try {
                int n;
                while ((n = in.read(buf)) > 0) {
                  if (record != null) {
                    synchronized (this) {
                      record.write(buf, 0, n);
                    }
                  }
                  out.write(buf, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // one side closed
              } finally {
                try {
                  peer.shutdownOutput();
                } catch (IOException e) {
                  // already gone
                }
              }
            },
            "recording-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() throws IOException {
    listener.close();
    synchronized (this) {
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
