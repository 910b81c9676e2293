package io.pmix.common.internal.connector;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A tool rendezvous file as a reader sees it (docs/transport.md §3.4): line 1 the server's URI,
 * line 2 its version, line 3 its pid, line 4 {@code euid:egid}, line 5 a timestamp. Only line 1 is
 * required; the others are kept when present. Unlike the 4.2.2 reader (which drops the last
 * character of every line), lines are read as lines, with or without their final newline.
 * Immutable.
 *
 * @param path where it was read
 * @param uri line 1
 * @param version line 2, if present (a leading {@code v} is removed)
 * @param pid line 3, if present and a number
 */
public record RendezvousFile(Path path, String uri, Optional<String> version, OptionalLong pid) {
  /** How often an existing but still empty file is re-read, and the pause between reads (C). */
  private static final int EMPTY_RETRIES = 3;

  private static final long EMPTY_RETRY_MILLIS = 10;

  /** Largest file accepted: five short lines; anything bigger is not a rendezvous file. */
  private static final int MAX_SIZE = 64 * 1024;

  /** Checks for nulls. */
  public RendezvousFile {
    requireNonNull(path, "path");
    requireNonNull(uri, "uri");
    requireNonNull(version, "version");
    requireNonNull(pid, "pid");
  }

  /** The per-process file of a server with tool support: {@code pmix.<host>.tool.<pid>}. */
  public static String pidFileName(String host, long pid) {
    return "pmix." + host + ".tool." + pid;
  }

  /** The per-namespace file of a server with tool support: {@code pmix.<host>.tool.<nspace>}. */
  public static String nspaceFileName(String host, String nspace) {
    return "pmix." + host + ".tool." + nspace;
  }

  /**
   * The prefix every tool rendezvous file of {@code host} starts with: {@code pmix.<host>.tool};
   * the session file has exactly this name.
   */
  public static String toolPrefix(String host) {
    return "pmix." + host + ".tool";
  }

  /** The system server's file, directly in the system tmpdir: {@code pmix.sys.<host>}. */
  public static String systemFileName(String host) {
    return "pmix.sys." + host;
  }

  /**
   * Reads a rendezvous file. An existing but empty file is re-read a few times (its writer may be
   * between create and write, as C allows for).
   *
   * @throws PmixException with {@code ERR_NOT_FOUND} if it does not exist, {@code ERR_BAD_PARAM}
   *     if it is empty, too large or its first line is not a URI
   */
  public static RendezvousFile read(Path path) {
    requireNonNull(path, "path");
    String text = "";
    for (int attempt = 0; attempt <= EMPTY_RETRIES; attempt++) {
      // java.io, not Files: a tool's first init would load the JDK's file channels for it.
      byte[] bytes;
      try (FileInputStream in = new FileInputStream(path.toFile())) {
        bytes = in.readNBytes(MAX_SIZE + 1);
      } catch (IOException e) {
        throw new PmixException(Status.ERR_NOT_FOUND, "cannot read " + path + ": " + e, e);
      }
      if (bytes.length > MAX_SIZE) {
        throw new PmixException(Status.ERR_BAD_PARAM, path + " is too large");
      }
      text = new String(bytes, UTF_8);
      if (!text.isEmpty()) {
        break;
      }
      try {
        Thread.sleep(EMPTY_RETRY_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    List<String> lines = Arrays.asList(text.split("\n", -1));
    String uri = lines.get(0).strip();
    if (uri.isEmpty()) {
      throw new PmixException(Status.ERR_BAD_PARAM, path + " holds no server URI");
    }
    // Checks the shape now, so a bad file is reported as such and not as a failed connect.
    var unused = ServerAddress.parse(uri, "v41");
    Optional<String> version = Optional.empty();
    if (lines.size() > 1 && !lines.get(1).isBlank()) {
      String v = lines.get(1).strip();
      version = Optional.of(v.startsWith("v") ? v.substring(1) : v);
    }
    OptionalLong pid = OptionalLong.empty();
    if (lines.size() > 2) {
      try {
        pid = OptionalLong.of(Long.parseLong(lines.get(2).strip()));
      } catch (NumberFormatException e) {
        // Optional line: a tool needs only the URI.
      }
    }
    return new RendezvousFile(path, uri, version, pid);
  }

  /** The server's address, to be spoken to with {@code bfrops}. */
  public ServerAddress address(String bfrops) {
    return ServerAddress.parse(uri, bfrops);
  }
}
