package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.testing.ProcessResources;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Segment files mapped through libpmixjava ({@link NativeMaps}, {@link Segment#mapFile}): shared
 * with the file both ways, unmapped by {@code close} at once with no descriptor kept, and the
 * cases left to the JDK (an empty file) or refused (a missing one) told apart.
 */
@Timeout(60)
class NativeMapsTest {
  @TempDir Path dir;

  private long mappingsOf(Path p) throws Exception {
    String real = p.toRealPath().toString();
    return Files.readAllLines(Path.of("/proc/self/maps")).stream()
        .filter(l -> l.endsWith(real))
        .count();
  }

  @Test
  void thisBuildMapsThroughItsOwnLibrary() {
    assertTrue(NativeMaps.available());
  }

  @Test
  void aReadOnlyMappingSeesTheFileAndItsLaterWritesThenGoesAtClose() throws Exception {
    Path p = dir.resolve("seg");
    byte[] content = new byte[8192];
    for (int i = 0; i < content.length; i++) {
      content[i] = (byte) i;
    }
    Files.write(p, content);
    Segment s = Segment.mapFile("seg", p, false);
    assertNotNull(s);
    assertEquals(content.length, s.size());
    assertArrayEquals(content, s.copy(0, content.length));
    assertEquals(1, mappingsOf(p));
    String real = p.toRealPath().toString();
    assertTrue(
        ProcessResources.openFds().stream().noneMatch(f -> f.contains(real)),
        "the descriptor is closed once mapped");
    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
      f.seek(4096);
      f.write(new byte[] {42, 43});
    }
    assertArrayEquals(new byte[] {42, 43}, s.copy(4096, 2), "a later write of the file is seen");
    s.close();
    s.close();
    assertEquals(0, mappingsOf(p), "unmapped at close");
    assertThrows(IllegalStateException.class, () -> s.u8(0));
  }

  @Test
  void aWritableMappingWritesTheFile() throws Exception {
    Path p = dir.resolve("lock");
    Files.write(p, new byte[4096]);
    Segment s = Segment.mapFile("lock", p, true);
    assertNotNull(s);
    s.putI32(8, 0x01020304);
    s.close();
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(p)).order(ByteOrder.nativeOrder());
    assertEquals(0x01020304, b.getInt(8));
  }

  @Test
  void aMissingFileIsNoSuchFileAndAnEmptyOneIsLeftToTheJdk() throws Exception {
    assertThrows(NoSuchFileException.class, () -> Segment.mapFile("x", dir.resolve("x"), false));
    Path empty = Files.createFile(dir.resolve("empty"));
    assertNull(Segment.mapFile("empty", empty, false));
    // And the store's own opening of it goes on through the JDK.
    try (Segment s = new DirectorySegments(dir).open("empty", false)) {
      assertEquals(0, s.size());
    }
  }
}
