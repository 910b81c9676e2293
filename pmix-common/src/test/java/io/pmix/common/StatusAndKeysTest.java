package io.pmix.common;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Checks the generated tables in {@link Status} and {@link Keys} against the installed OpenPMIx
 * headers, plus a few fixed facts that hold without them.
 */
class StatusAndKeysTest {
  private static final List<String> HEADER_DIRS =
      List.of(
          "/usr/lib/x86_64-linux-gnu/pmix2/include",
          "/usr/lib/aarch64-linux-gnu/pmix2/include",
          "/usr/include/pmix",
          "/usr/include",
          "/usr/local/include",
          "/opt/pmix/include");

  private static final Pattern DEFINE =
      Pattern.compile("^\\s*#\\s*define\\s+(PMIX_\\w+)\\s+(.*?)\\s*$");
  private static final Pattern KEY_DEFINE =
      Pattern.compile("^\\s*#\\s*define\\s+(PMIX_\\w+)\\s+\"(pmix\\.[^\"]*)\"\\s*(.*)$");
  private static final Pattern TYPE_COMMENT = Pattern.compile("^(?://|/\\*)\\s*\\(([^)]*)\\)");
  private static final Pattern TERM = Pattern.compile("\\s*([+-]?)\\s*(\\d+|PMIX_\\w+)\\s*");

  /** Header type comments whose mapping is unambiguous, to spot-check the generated types. */
  private static final Map<String, DataType> SIMPLE_TYPES =
      Map.ofEntries(
          Map.entry("char*", DataType.STRING),
          Map.entry("bool", DataType.BOOL),
          Map.entry("uint16_t", DataType.UINT16),
          Map.entry("uint32_t", DataType.UINT32),
          Map.entry("uint64_t", DataType.UINT64),
          Map.entry("int", DataType.INT),
          Map.entry("int32_t", DataType.INT32),
          Map.entry("size_t", DataType.SIZE),
          Map.entry("pid_t", DataType.PID),
          Map.entry("float", DataType.FLOAT),
          Map.entry("double", DataType.DOUBLE),
          Map.entry("time_t", DataType.TIME),
          Map.entry("pmix_rank_t", DataType.PROC_RANK),
          Map.entry("pmix_proc_t*", DataType.PROC),
          Map.entry("pmix_status_t", DataType.STATUS),
          Map.entry("pmix_byte_object_t", DataType.BYTE_OBJECT),
          Map.entry("pmix_envar_t*", DataType.ENVAR),
          Map.entry("pmix_data_array_t*", DataType.DATA_ARRAY),
          Map.entry("varies", DataType.UNDEF));

  @Test
  void notFoundByCode() {
    Status s = Status.of(-46);
    assertSame(Status.ERR_NOT_FOUND, s);
    assertEquals("PMIX_ERR_NOT_FOUND", s.name());
    assertTrue(s.isKnown());
  }

  @Test
  void unknownCodeIsCarriedThrough() {
    Status s = Status.of(-99999);
    assertFalse(s.isKnown());
    assertEquals(-99999, s.code());
    assertEquals("UNKNOWN(-99999)", s.name());
    assertEquals(Status.of(-99999), s);
    assertEquals(Status.of(-99999).hashCode(), s.hashCode());
    assertNotEquals(Status.ERR_NOT_FOUND, s);
  }

  @Test
  void aliasesKeepTheModernNameCanonical() {
    assertSame(Status.ERR_EXISTS, Status.of(-11));
    assertSame(Status.EVENT_JOB_END, Status.of(-145));
    assertEquals(Status.ERR_JOB_TERMINATED, Status.EVENT_JOB_END);
    assertEquals("PMIX_ERR_JOB_TERMINATED", Status.ERR_JOB_TERMINATED.name());
    assertEquals(-22, Status.ERR_PACK_MISMATCH.code());
    assertEquals(Optional.of(Status.ERR_PACK_MISMATCH), Status.forName("PMIX_ERR_PACK_MISMATCH"));
  }

  @Test
  void jobSizeIsUint32() {
    Key k = Keys.byName("pmix.job.size").orElseThrow();
    assertEquals(DataType.UINT32, k.type());
    assertSame(Keys.JOB_SIZE, k);
  }

  @Test
  void everyHeaderStatusIsDefined() throws Exception {
    Path dir = headerDir();
    Map<String, Integer> statuses = headerStatuses(dir);
    assertTrue(statuses.size() > 150, "parsed only " + statuses.size() + " statuses");
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, Integer> e : statuses.entrySet()) {
      String cName = e.getKey();
      int code = e.getValue();
      Optional<Status> byName = Status.forName(cName);
      if (byName.isEmpty() || byName.get().code() != code) {
        problems.add(cName + "=" + code + ": forName gives " + byName);
      }
      Object field = staticField(Status.class, cName.substring(5));
      if (!(field instanceof Status s) || s.code() != code) {
        problems.add(cName + "=" + code + ": field " + cName.substring(5) + " is " + field);
      } else if (!s.name().equals(cName)) {
        problems.add(cName + ": field has name " + s.name());
      }
      if (!Status.of(code).isKnown()) {
        problems.add(cName + "=" + code + ": of(code) is unknown");
      }
    }
    for (Field f : Status.class.getDeclaredFields()) {
      if (isConstant(f, Status.class) && !statuses.containsKey("PMIX_" + f.getName())) {
        problems.add("Status." + f.getName() + " is not in the header");
      }
    }
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  @Test
  void everyHeaderKeyIsDefined() throws Exception {
    Path dir = headerDir();
    List<String> problems = new ArrayList<>();
    Map<String, String> macros = new LinkedHashMap<>();
    for (String header : List.of("pmix_common.h", "pmix_deprecated.h")) {
      Path p = dir.resolve(header);
      if (!Files.exists(p)) {
        continue;
      }
      for (String line : Files.readAllLines(p, UTF_8)) {
        Matcher m = KEY_DEFINE.matcher(line);
        if (!m.matches()) {
          continue;
        }
        String cName = m.group(1);
        String attr = m.group(2);
        macros.put(cName, attr);
        Object field = staticField(Keys.class, cName.substring(5));
        if (!(field instanceof Key k) || !k.name().equals(attr)) {
          problems.add(cName + "=\"" + attr + "\": field " + cName.substring(5) + " is " + field);
          continue;
        }
        if (Keys.byName(attr).isEmpty()) {
          problems.add(cName + "=\"" + attr + "\": byName is empty");
        }
        Matcher t = TYPE_COMMENT.matcher(m.group(3));
        if (t.find()) {
          DataType expected = SIMPLE_TYPES.get(t.group(1).trim());
          if (expected != null && expected != k.type()) {
            problems.add(cName + ": header says " + t.group(1) + ", Keys has " + k.type());
          }
        }
      }
    }
    assertTrue(macros.size() > 470, "parsed only " + macros.size() + " keys");
    for (Field f : Keys.class.getDeclaredFields()) {
      if (isConstant(f, Key.class) && !macros.containsKey("PMIX_" + f.getName())) {
        problems.add("Keys." + f.getName() + " is not in the header");
      }
    }
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  /** The directory holding pmix_common.h; fails under CI when there is none, else skips. */
  private static Path headerDir() throws IOException {
    List<String> dirs = new ArrayList<>();
    String override = System.getenv("PMIX_INCLUDE_DIR");
    if (override != null && !override.isEmpty()) {
      dirs.add(override);
    }
    dirs.addAll(HEADER_DIRS);
    for (String d : dirs) {
      Path dir = Path.of(d);
      if (Files.isRegularFile(dir.resolve("pmix_common.h"))) {
        checkVersion(dir);
        return dir;
      }
    }
    String msg = "no OpenPMIx pmix_common.h in " + dirs + " (set PMIX_INCLUDE_DIR)";
    if ("true".equals(System.getenv("CI"))
        || "true".equals(System.getProperty("pmix.interop.required"))) {
      fail(msg);
    }
    Assumptions.assumeTrue(false, msg);
    throw new AssertionError("unreachable");
  }

  private static void checkVersion(Path dir) throws IOException {
    Path v = dir.resolve("pmix_version.h");
    if (!Files.exists(v)) {
      return;
    }
    String text = Files.readString(v, UTF_8);
    assertTrue(
        Pattern.compile("#define\\s+PMIX_VERSION_MAJOR\\s+4L").matcher(text).find()
            && Pattern.compile("#define\\s+PMIX_VERSION_MINOR\\s+2L").matcher(text).find(),
        "the tables are for OpenPMIx 4.2, but " + v + " is another version");
  }

  /**
   * Every {@code pmix_status_t} macro: each define in the status section of pmix_common.h, and
   * elsewhere in both headers every define whose value is a negative number or another status.
   */
  private static Map<String, Integer> headerStatuses(Path dir) throws IOException {
    Map<String, Integer> out = new LinkedHashMap<>();
    List<String> common = Files.readAllLines(dir.resolve("pmix_common.h"), UTF_8);
    boolean inSection = false;
    for (String line : common) {
      if (line.contains("typedef int pmix_status_t;")) {
        inSection = true;
      }
      Matcher m = DEFINE.matcher(line);
      if (m.matches()) {
        OptionalInt v = eval(m.group(2), out);
        if (inSection && v.isEmpty()) {
          fail("cannot evaluate status " + m.group(1) + " = " + m.group(2));
        }
        if (v.isPresent() && (inSection || v.getAsInt() < 0 || isAlias(m.group(2), out))) {
          out.put(m.group(1), v.getAsInt());
        }
        if (m.group(1).equals("PMIX_EXTERNAL_ERR_BASE")) {
          inSection = false;
        }
      }
    }
    Path deprecated = dir.resolve("pmix_deprecated.h");
    if (Files.exists(deprecated)) {
      for (String line : Files.readAllLines(deprecated, UTF_8)) {
        Matcher m = DEFINE.matcher(line);
        if (m.matches()) {
          OptionalInt v = eval(m.group(2), out);
          if (v.isPresent() && (v.getAsInt() < 0 || isAlias(m.group(2), out))) {
            out.put(m.group(1), v.getAsInt());
          }
        }
      }
    }
    for (String name : out.keySet()) {
      if (name.startsWith("PMIX_ERR_")) {
        assertTrue(out.get(name) < 0, name + " should be negative");
      }
    }
    return out;
  }

  private static boolean isAlias(String expr, Map<String, Integer> known) {
    String e = stripComment(expr).replace("(", "").replace(")", "").trim();
    return known.containsKey(e);
  }

  /** Evaluates a sum of integer literals and known macros, ignoring parentheses. */
  private static OptionalInt eval(String expr, Map<String, Integer> known) {
    String e = stripComment(expr).replace("(", " ").replace(")", " ").trim();
    if (e.isEmpty()) {
      return OptionalInt.empty();
    }
    Matcher m = TERM.matcher(e);
    long sum = 0;
    int pos = 0;
    while (pos < e.length()) {
      m.region(pos, e.length());
      if (!m.lookingAt()) {
        return OptionalInt.empty();
      }
      if (pos > 0 && m.group(1).isEmpty()) {
        return OptionalInt.empty();
      }
      long term;
      if (Character.isDigit(m.group(2).charAt(0))) {
        term = Long.parseLong(m.group(2));
      } else if (known.containsKey(m.group(2))) {
        term = known.get(m.group(2));
      } else {
        return OptionalInt.empty();
      }
      sum += m.group(1).equals("-") ? -term : term;
      pos = m.end();
    }
    return OptionalInt.of(Math.toIntExact(sum));
  }

  private static String stripComment(String s) {
    return s.replaceAll("//.*$", "").replaceAll("/\\*.*?(\\*/|$)", "").trim();
  }

  private static boolean isConstant(Field f, Class<?> type) {
    int mod = f.getModifiers();
    return Modifier.isPublic(mod) && Modifier.isStatic(mod) && f.getType() == type;
  }

  private static Object staticField(Class<?> owner, String name) throws IllegalAccessException {
    try {
      Field f = owner.getField(name);
      return Modifier.isStatic(f.getModifiers()) ? f.get(null) : null;
    } catch (NoSuchFieldException e) {
      return null;
    }
  }
}
