package io.pmix.common.internal.message;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.common.io.BaseEncoding;
import io.pmix.common.codec.BufferType;
import io.pmix.common.codec.WireFormat;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;

/**
 * The golden vectors of {@code messages.tsv} by name and format, for the tests of other modules
 * (pmix-server feeds the golden requests to its core and compares its replies with the golden
 * replies). {@link MessageCasesTest} pins each vector to its record.
 */
public final class GoldenMessages {
  private static final Map<String, byte[]> VECTORS = load();

  private GoldenMessages() {}

  /**
   * The bytes of vector {@code name} in {@code format}'s buffer type (a request's begin with its
   * COMMAND unit).
   *
   * @throws IllegalArgumentException if the file has no such vector
   */
  public static byte[] bytes(String name, WireFormat format) {
    byte[] b = VECTORS.get(key(name, format.bufferType()));
    if (b == null) {
      throw new IllegalArgumentException("no golden vector " + name + " " + format.bufferType());
    }
    return b.clone();
  }

  private static String key(String name, BufferType type) {
    return name + "\t" + type;
  }

  private static Map<String, byte[]> load() {
    Map<String, byte[]> out = new HashMap<>();
    try (InputStream in = GoldenMessages.class.getResourceAsStream("messages.tsv")) {
      if (in == null) {
        throw new IllegalStateException("messages.tsv is not on the class path");
      }
      BufferedReader br = new BufferedReader(new InputStreamReader(in, UTF_8));
      boolean header = true;
      for (String line; (line = br.readLine()) != null; ) {
        if (line.startsWith("#") || line.isBlank()) {
          continue;
        }
        if (header) {
          header = false;
          continue;
        }
        String[] f = line.split("\t", -1);
        out.put(
            key(f[0], BufferType.valueOf(f[1])), BaseEncoding.base16().lowerCase().decode(f[2]));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Map.copyOf(out);
  }
}
