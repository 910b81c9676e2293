package io.pmix.testkit.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.pmix.common.internal.LinkerPaths;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Whether an ELF executable loads a {@code libmpi.so} (an Open MPI program, which pmixrun launches
 * as Slurm's direct launch), found the way {@code ldd} finds it, by reading the files: the shared
 * libraries each object needs ({@code DT_NEEDED}), looked up as glibc's dynamic linker looks them
 * up, to the end of the chain.
 *
 * <p>Why not {@code ldd}: it is a shell script that runs the dynamic linker, three to four
 * processes; on the 2-core test machine it took ~23 ms of every pmixrun job's fixed cost (`-n 1
 * -- /bin/true`, 20 rounds: 315 against 292 ms with the check off). Reading the headers of the
 * few files involved costs a fraction of that. Where this reading cannot decide as ldd would (not
 * a 64-bit little-endian ELF, a search path using {@code $LIB} or {@code $PLATFORM}, a library not
 * found), it answers {@link Answer#UNKNOWN} and pmixrun asks ldd.
 *
 * <p>The search, per ld.so(8), for a library an object needs: one loaded already under that name
 * (as needed before, or its soname) is taken; a name with a slash is a path;
 * else the object's {@code DT_RPATH} and then the executable's (each only where that object has
 * no {@code DT_RUNPATH}), {@code LD_LIBRARY_PATH}, the object's {@code DT_RUNPATH}, then the
 * directories of the linker's cache and its defaults ({@link LinkerPaths}). A file of another
 * ELF class or machine is skipped, as the linker skips it. {@code $ORIGIN} is the directory of
 * the object.
 */
public final class MpiLinkage {
  /** What {@link #of} found. */
  public enum Answer {
    /** A {@code libmpi.so} is among the libraries the executable loads. */
    MPI,
    /** The file loads no {@code libmpi.so}, or is not a dynamic ELF executable (a script). */
    NOT_MPI,
    /** This reading cannot tell; ask {@code ldd}. */
    UNKNOWN
  }

  private static final int PT_LOAD = 1;
  private static final int PT_DYNAMIC = 2;
  private static final long DT_NULL = 0;
  private static final long DT_NEEDED = 1;
  private static final long DT_STRTAB = 5;
  private static final long DT_SONAME = 14;
  private static final long DT_RPATH = 15;
  private static final long DT_RUNPATH = 29;
  /** More objects than any program loads: a cycle or a pathological tree ends here. */
  private static final int MAX_OBJECTS = 1024;
  /** The longest header, program-header table or dynamic section read. */
  private static final int MAX_TABLE = 1 << 20;

  private final List<String> systemDirs;
  private final List<String> libraryPath;

  private MpiLinkage(List<String> systemDirs, List<String> libraryPath) {
    this.systemDirs = systemDirs;
    this.libraryPath = libraryPath;
  }

  /**
   * Reads {@code executable} and the libraries it loads, with this machine's linker directories
   * and {@code ldLibraryPath} (the ranks' {@code LD_LIBRARY_PATH}, or null).
   */
  public static Answer of(Path executable, @Nullable String ldLibraryPath) {
    String triplet = LinkerPaths.triplet();
    if (triplet == null || !"Linux".equals(System.getProperty("os.name"))) {
      return Answer.UNKNOWN;
    }
    return of(executable, ldLibraryPath, LinkerPaths.platformPath(Path.of("/"), triplet));
  }

  /** {@link #of(Path, String)} with the given linker directories (tests). */
  static Answer of(Path executable, @Nullable String ldLibraryPath, List<String> systemDirs) {
    List<String> lib = new ArrayList<>();
    if (ldLibraryPath != null) {
      for (String d : split(ldLibraryPath)) {
        lib.add(d.isEmpty() ? "." : d);
      }
    }
    return new MpiLinkage(systemDirs, lib).walk(executable);
  }

  private Answer walk(Path executable) {
    Elf exe;
    try {
      if (!Elf.hasMagic(executable.toFile())) {
        return Answer.NOT_MPI; // a script or data: ldd says "not a dynamic executable"
      }
      exe = Elf.read(executable.toFile(), true);
    } catch (IOException e) {
      return Answer.UNKNOWN;
    }
    if (exe == null) {
      return Answer.UNKNOWN;
    }
    if (!exe.dynamic()) {
      return Answer.NOT_MPI; // static: ldd says "not a dynamic executable"
    }
    Set<String> seen = new HashSet<>();
    // What the linker has loaded by then, by the names it matches a later need against (the
    // name it was needed as and its soname): such a need takes it, wherever that object's own
    // search paths would look.
    Map<String, Elf> loaded = new HashMap<>();
    Deque<Elf> todo = new ArrayDeque<>();
    todo.add(exe);
    seen.add(canonical(exe.file()));
    while (!todo.isEmpty()) {
      Elf obj = todo.poll();
      for (String needed : obj.needed()) {
        if (isMpi(needed)) {
          return Answer.MPI;
        }
        Elf dep = loaded.get(needed);
        if (dep == null) {
          dep = find(needed, obj, exe);
          if (dep == null) {
            return Answer.UNKNOWN;
          }
          loaded.put(needed, dep);
          if (dep.soname() != null) {
            loaded.putIfAbsent(dep.soname(), dep);
          }
        }
        if (isMpi(dep.file().getPath())) {
          return Answer.MPI;
        }
        if (seen.add(canonical(dep.file()))) {
          if (seen.size() > MAX_OBJECTS) {
            return Answer.UNKNOWN;
          }
          todo.add(dep);
        }
      }
    }
    return Answer.NOT_MPI;
  }

  /** ldd's test: a library named {@code libmpi.so...}, or one found at such a path. */
  private static boolean isMpi(String nameOrPath) {
    String s = nameOrPath.toLowerCase(Locale.ROOT);
    return s.startsWith("libmpi.so") || s.contains("/libmpi.so");
  }

  /** The library {@code name} that {@code obj} loads, or null where this reading cannot tell. */
  private @Nullable Elf find(String name, Elf obj, Elf exe) {
    if (name.indexOf('/') >= 0) {
      return candidate(new File(name), exe);
    }
    List<List<String>> order = new ArrayList<>();
    if (obj.runpath() == null) {
      order.add(obj.rpath());
      if (obj != exe && exe.runpath() == null) {
        order.add(exe.rpath());
      }
    }
    order.add(libraryPath);
    List<String> runpath = obj.runpath();
    if (runpath != null) {
      order.add(runpath);
    }
    order.add(systemDirs);
    for (List<String> dirs : order) {
      for (String dir : dirs) {
        String d = expand(dir, obj);
        if (d == null) {
          return null;
        }
        Elf e = candidate(new File(d, name), exe);
        if (e != null) {
          return e;
        }
      }
    }
    return null;
  }

  /** The ELF object at {@code f} if it is one the linker would load beside {@code exe}. */
  private static @Nullable Elf candidate(File f, Elf exe) {
    if (!f.isFile()) {
      return null;
    }
    try {
      Elf e = Elf.read(f, false);
      return e != null && e.machine() == exe.machine() ? e : null;
    } catch (IOException ex) {
      return null;
    }
  }

  /** {@code dir} with {@code $ORIGIN} replaced, or null for another dynamic string token. */
  private static @Nullable String expand(String dir, Elf obj) {
    if (dir.indexOf('$') < 0) {
      return dir;
    }
    // The executable's origin is where it really is (the linker reads /proc/self/exe), a
    // library's where it was found.
    File where = obj.executable() ? new File(canonical(obj.file())) : obj.file().getAbsoluteFile();
    File parent = where.getParentFile();
    String origin = parent == null ? "/" : parent.getPath();
    String d = dir.replace("${ORIGIN}", origin).replace("$ORIGIN", origin);
    return d.indexOf('$') < 0 ? d : null;
  }

  private static String canonical(File f) {
    try {
      return f.getCanonicalPath();
    } catch (IOException e) {
      return f.getAbsolutePath();
    }
  }

  private static List<String> split(String path) {
    List<String> out = new ArrayList<>();
    int from = 0;
    for (int i = 0; i <= path.length(); i++) {
      if (i == path.length() || path.charAt(i) == ':' || path.charAt(i) == ';') {
        out.add(path.substring(from, i));
        from = i + 1;
      }
    }
    return out;
  }

  /**
   * What this class reads of one ELF file. A record whose generated {@code equals}, {@code
   * hashCode} and {@code toString} are never called (objects are compared by identity), so no
   * method-handle bootstrap runs on pmixrun's start-up path.
   */
  private record Elf(
      File file,
      boolean executable,
      int machine,
      boolean dynamic,
      List<String> needed,
      List<String> rpath,
      @Nullable List<String> runpath,
      @Nullable String soname) {
    /** Whether {@code f} begins as an ELF file does. */
    static boolean hasMagic(File f) throws IOException {
      try (RandomAccessFile in = new RandomAccessFile(f, "r")) {
        byte[] m = new byte[4];
        return in.read(m) == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
      }
    }

    /** The file's dynamic section, or null if it is not a 64-bit little-endian ELF file. */
    static @Nullable Elf read(File f, boolean executable) throws IOException {
      try (RandomAccessFile in = new RandomAccessFile(f, "r")) {
        ByteBuffer h = bytes(in, 0, 64);
        if (h == null
            || h.get(0) != 0x7f || h.get(1) != 'E' || h.get(2) != 'L' || h.get(3) != 'F'
            || h.get(4) != 2 /* ELFCLASS64 */ || h.get(5) != 1 /* ELFDATA2LSB */) {
          return null;
        }
        int machine = h.getShort(18) & 0xffff;
        long phoff = h.getLong(32);
        int phentsize = h.getShort(54) & 0xffff;
        int phnum = h.getShort(56) & 0xffff;
        if (phentsize < 56 || (long) phentsize * phnum > MAX_TABLE) {
          return null;
        }
        ByteBuffer ph = bytes(in, phoff, phentsize * phnum);
        if (ph == null) {
          return null;
        }
        long dynOff = -1;
        long dynSize = 0;
        List<long[]> loads = new ArrayList<>(); // {vaddr, offset, filesz}
        for (int i = 0; i < phnum; i++) {
          int at = i * phentsize;
          int type = ph.getInt(at);
          if (type == PT_LOAD) {
            loads.add(new long[] {ph.getLong(at + 16), ph.getLong(at + 8), ph.getLong(at + 32)});
          } else if (type == PT_DYNAMIC) {
            dynOff = ph.getLong(at + 8);
            dynSize = ph.getLong(at + 32);
          }
        }
        if (dynOff < 0) {
          return new Elf(f, executable, machine, false, List.of(), List.of(), null, null);
        }
        if (dynSize > MAX_TABLE) {
          return null;
        }
        ByteBuffer dyn = bytes(in, dynOff, (int) dynSize);
        if (dyn == null) {
          return null;
        }
        long strtab = -1;
        List<Long> neededAt = new ArrayList<>();
        long rpathAt = -1;
        long runpathAt = -1;
        long sonameAt = -1;
        for (int at = 0; at + 16 <= dyn.limit(); at += 16) {
          long tag = dyn.getLong(at);
          long val = dyn.getLong(at + 8);
          if (tag == DT_NULL) {
            break;
          } else if (tag == DT_NEEDED) {
            neededAt.add(val);
          } else if (tag == DT_STRTAB) {
            strtab = val;
          } else if (tag == DT_RPATH) {
            rpathAt = val;
          } else if (tag == DT_RUNPATH) {
            runpathAt = val;
          } else if (tag == DT_SONAME) {
            sonameAt = val;
          }
        }
        long strOff = fileOffset(loads, strtab);
        if (strOff < 0) {
          return null;
        }
        List<String> needed = new ArrayList<>();
        for (long n : neededAt) {
          needed.add(string(in, strOff + n));
        }
        List<String> rpath = rpathAt < 0 ? List.of() : split(string(in, strOff + rpathAt));
        List<String> runpath = runpathAt < 0 ? null : split(string(in, strOff + runpathAt));
        String soname = sonameAt < 0 ? null : string(in, strOff + sonameAt);
        return new Elf(f, executable, machine, true, needed, rpath, runpath, soname);
      }
    }

    /** The file offset of virtual address {@code vaddr}, or -1 outside every loaded segment. */
    private static long fileOffset(List<long[]> loads, long vaddr) {
      for (long[] l : loads) {
        if (vaddr >= l[0] && vaddr < l[0] + l[2]) {
          return vaddr - l[0] + l[1];
        }
      }
      return -1;
    }

    private static @Nullable ByteBuffer bytes(RandomAccessFile in, long off, int len)
        throws IOException {
      if (off < 0 || off + len > in.length()) {
        return null;
      }
      byte[] b = new byte[len];
      in.seek(off);
      in.readFully(b);
      return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The NUL-terminated string at {@code off} (at most 4 KiB: a path list). */
    private static String string(RandomAccessFile in, long off) throws IOException {
      int len = (int) Math.min(4096, Math.max(0, in.length() - off));
      ByteBuffer b = bytes(in, off, len);
      if (b == null) {
        return "";
      }
      int end = 0;
      while (end < len && b.get(end) != 0) {
        end++;
      }
      return new String(b.array(), 0, end, UTF_8);
    }
  }
}
