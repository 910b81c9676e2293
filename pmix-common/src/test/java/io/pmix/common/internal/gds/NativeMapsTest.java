package io.pmix.common.internal.gds;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmix.common.PmixException;
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

  @Test
  void aFileIdIsTheKernelsDeviceAndInodeAndFollowsLinks() throws Exception {
    Path p = Files.write(dir.resolve("lockseg"), new byte[64]);
    long[] id = NativeMaps.fileId(p);
    assertNotNull(id);
    long dev = ((Number) Files.getAttribute(p, "unix:dev")).longValue();
    long ino = ((Number) Files.getAttribute(p, "unix:ino")).longValue();
    // The JDK's dev is the kernel's encoding of major and minor; compare the inode exactly and
    // the device through what both sides agree on: equal for equal files, different otherwise.
    assertEquals(ino, id[1]);
    Path other = Files.write(dir.resolve("other"), new byte[64]);
    long[] otherId = NativeMaps.fileId(other);
    assertNotNull(otherId);
    assertEquals(id[0], otherId[0], "one directory, one device");
    assertEquals(dev, ((Number) Files.getAttribute(other, "unix:dev")).longValue());
    assertTrue(id[1] != otherId[1], "two files, two inodes");
    Path link = Files.createSymbolicLink(dir.resolve("link"), p);
    Path hard = Files.createLink(dir.resolve("hard"), p);
    assertArrayEquals(id, NativeMaps.fileId(link), "a symbolic link names its target");
    assertArrayEquals(id, NativeMaps.fileId(hard), "a hard link is the same file");
    assertNull(NativeMaps.fileId(dir.resolve("missing")));
    assertNull(NativeMaps.fileId(dir.resolve("caf\u00e9")), "left to the JDK");
  }

  @Test
  void aSlotsIdentityIsTheSameForTheSameFileAndDiffersForAnother() throws Exception {
    Files.write(dir.resolve("smlockseg-a"), new byte[64]);
    Files.write(dir.resolve("smlockseg-b"), new byte[64]);
    DirectorySegments src = new DirectorySegments(dir);
    assertEquals(src.identity("smlockseg-a"), src.identity("smlockseg-a"));
    assertTrue(!src.identity("smlockseg-a").equals(src.identity("smlockseg-b")));
    assertThrows(PmixException.class, () -> src.identity("smlockseg-missing"));
    // A name the native call does not take goes through the JDK, the same way every time.
    Files.write(dir.resolve("smlockseg-caf\u00e9"), new byte[64]);
    String viaJdk = src.identity("smlockseg-caf\u00e9");
    assertEquals(viaJdk, src.identity("smlockseg-caf\u00e9"));
    assertTrue(!viaJdk.equals(src.identity("smlockseg-a")));
  }

  @Test
  void compareAndSetOfAMappedIntIsAtomicAcrossThreadsAndSeenInTheFile() throws Exception {
    Path p = Files.write(dir.resolve("slots"), new byte[4096]);
    Segment s = Segment.mapFile("slots", p, true);
    assertNotNull(s);
    try {
      ByteBuffer b = s.buffer();
      assertEquals(Boolean.TRUE, NativeMaps.compareAndSetInt(b, 36, 0, 1));
      assertEquals(Boolean.FALSE, NativeMaps.compareAndSetInt(b, 36, 0, 1), "already claimed");
      assertEquals(1, s.i32(36));
      assertEquals(0, s.i32(32), "its neighbours untouched");
      assertEquals(0, s.i32(40));
      // Two threads race for each of 500 ints: exactly one claim of each succeeds.
      int n = 500;
      int[] wins = new int[2];
      Thread[] ts = new Thread[2];
      for (int t = 0; t < 2; t++) {
        int me = t;
        ts[t] =
            new Thread(
                () -> {
                  for (int i = 0; i < n; i++) {
                    if (Boolean.TRUE.equals(NativeMaps.compareAndSetInt(b, 64 + 4 * i, 0, me + 1))) {
                      wins[me]++;
                    }
                  }
                });
      }
      for (Thread t : ts) {
        t.start();
      }
      for (Thread t : ts) {
        t.join();
      }
      assertEquals(n, wins[0] + wins[1]);
      ByteBuffer file = ByteBuffer.wrap(Files.readAllBytes(p)).order(ByteOrder.nativeOrder());
      for (int i = 0; i < n; i++) {
        int v = file.getInt(64 + 4 * i);
        assertTrue(v == 1 || v == 2, "int " + i + " holds " + v);
      }
      assertNull(
          NativeMaps.compareAndSetInt(ByteBuffer.allocate(64), 0, 0, 1), "a heap buffer has no address");
    } finally {
      s.close();
    }
  }
}
