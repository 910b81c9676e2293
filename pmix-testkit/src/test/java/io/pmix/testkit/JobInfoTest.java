package io.pmix.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pmix.common.DataArray;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.Value;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JobInfoTest {
  private static Map<String, Value> loose(List<Info> infos) {
    Map<String, Value> m = new LinkedHashMap<>();
    for (Info i : infos) {
      if (!(i.value() instanceof DataArray)) {
        m.put(i.key(), i.value());
      }
    }
    return m;
  }

  private static List<List<Info>> arrays(List<Info> infos, String key) {
    List<List<Info>> l = new ArrayList<>();
    for (Info i : infos) {
      if (i.key().equals(key)) {
        List<Info> a = new ArrayList<>();
        for (Value v : ((DataArray) i.value()).items()) {
          a.add((Info) v);
        }
        l.add(a);
      }
    }
    return l;
  }

  @Test
  void whatALauncherRegisters() {
    List<Info> infos =
        JobInfo.singleNode("job@1", 3, "node7", Path.of("/tmp/t"), Path.of("/w"), "srv", 9);
    Map<String, Value> job = loose(infos);
    assertEquals(3L, job.get("pmix.job.size").asLong());
    assertEquals(3L, job.get("pmix.univ.size").asLong());
    assertEquals(3L, job.get("pmix.max.size").asLong());
    assertEquals(1L, job.get("pmix.num.nodes").asLong());
    assertEquals(1L, job.get("pmix.job.napps").asLong());
    assertEquals("job@1", job.get("pmix.nspace").asString());
    assertEquals("job@1", job.get("pmix.jobid").asString());
    assertEquals("raw:node7", job.get("pmix.nmap").asString());
    assertEquals("raw:0,1,2", job.get("pmix.pmap").asString());
    assertEquals("/tmp/t", job.get("pmix.tmpdir").asString());
    assertEquals("srv", job.get("pmix.srv.nspace").asString());
    assertEquals(9L, job.get("pmix.srv.rank").asLong());
    // Every value has the type the key is declared with.
    for (Info i : infos) {
      Keys.byName(i.key())
          .filter(k -> k.type() != DataType.UNDEF)
          .ifPresent(k -> assertEquals(k.type(), i.value().type(), i.key()));
    }

    List<List<Info>> nodes = arrays(infos, "pmix.node.arr");
    assertEquals(1, nodes.size());
    assertEquals("pmix.hname", nodes.get(0).get(0).key());
    assertEquals(Value.of("0,1,2"), loose(nodes.get(0)).get("pmix.lpeers"));
    assertEquals(DataType.PROC_RANK, loose(nodes.get(0)).get("pmix.lldr").type());

    List<List<Info>> apps = arrays(infos, "pmix.app.arr");
    assertEquals("pmix.appnum", apps.get(0).get(0).key());
    assertEquals("/w", loose(apps.get(0)).get("pmix.wdir").asString());

    List<List<Info>> procs = arrays(infos, "pmix.pdata");
    assertEquals(3, procs.size());
    for (int r = 0; r < 3; r++) {
      Map<String, Value> p = loose(procs.get(r));
      assertEquals("pmix.rank", procs.get(r).get(0).key());
      assertEquals(r, p.get("pmix.rank").asLong());
      assertEquals(Value.uint16(r), p.get("pmix.lrank"));
      assertEquals(Value.uint16(r), p.get("pmix.nrank"));
      assertEquals(Value.uint32(0), p.get("pmix.appnum"));
      assertEquals(Value.uint32(0), p.get("pmix.nodeid"));
      assertEquals("node7", p.get("pmix.hname").asString());
      assertEquals(Value.rank(r), p.get("pmix.grank"));
      assertEquals(Value.rank(r), p.get("pmix.apprank"));
    }
  }

  @Test
  void severalAppsAreRankedOneAfterTheOther() {
    List<Info> infos =
        JobInfo.singleNode(
            "job@2",
            List.of(
                new JobInfo.App(2, Path.of("/a"), "prog-a x"),
                new JobInfo.App(1, Path.of("/b"), "prog-b")),
            "node7",
            Path.of("/tmp/t"),
            "srv",
            9);
    Map<String, Value> job = loose(infos);
    assertEquals(3L, job.get("pmix.job.size").asLong());
    assertEquals(2L, job.get("pmix.job.napps").asLong());
    assertEquals("raw:0,1,2", job.get("pmix.pmap").asString());

    List<List<Info>> apps = arrays(infos, "pmix.app.arr");
    assertEquals(2, apps.size());
    int[] sizes = {2, 1};
    int[] leaders = {0, 2};
    String[] dirs = {"/a", "/b"};
    String[] argvs = {"prog-a x", "prog-b"};
    for (int a = 0; a < 2; a++) {
      Map<String, Value> app = loose(apps.get(a));
      assertEquals("pmix.appnum", apps.get(a).get(0).key());
      assertEquals(Value.uint32(a), app.get("pmix.appnum"));
      assertEquals(Value.uint32(sizes[a]), app.get("pmix.app.size"));
      assertEquals(Value.rank(leaders[a]), app.get("pmix.aldr"));
      assertEquals(dirs[a], app.get("pmix.wdir").asString());
      assertEquals(argvs[a], app.get("pmix.app.argv").asString());
    }

    List<List<Info>> procs = arrays(infos, "pmix.pdata");
    assertEquals(3, procs.size());
    int[] appnum = {0, 0, 1};
    int[] apprank = {0, 1, 0};
    for (int r = 0; r < 3; r++) {
      Map<String, Value> p = loose(procs.get(r));
      assertEquals(r, p.get("pmix.rank").asLong());
      assertEquals(Value.uint32(appnum[r]), p.get("pmix.appnum"));
      assertEquals(Value.rank(apprank[r]), p.get("pmix.apprank"));
      assertEquals(Value.rank(r), p.get("pmix.grank"));
      assertEquals(Value.uint16(r), p.get("pmix.lrank"));
    }
  }

  @Test
  void aLaunchersOwnJobHasNoAppArgv() {
    List<Info> infos =
        JobInfo.singleNode("job@1", 2, "node7", Path.of("/tmp/t"), Path.of("/w"), "srv", 9);
    assertNull(loose(arrays(infos, "pmix.app.arr").get(0)).get("pmix.app.argv"));
  }

  @Test
  void aJobHasProcesses() {
    assertThrows(IllegalArgumentException.class,
        () -> JobInfo.singleNode("j", 0, "h", Path.of("/t"), Path.of("/w"), "s", 0));
  }
}
