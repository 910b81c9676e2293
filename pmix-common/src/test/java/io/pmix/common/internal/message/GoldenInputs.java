package io.pmix.common.internal.message;

import io.pmix.common.DataRange;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The values the golden messages are made of ({@code messages.tsv}): shared by the generator that
 * wrote the file from the encoders of the time and by the test that checks the message records
 * against it, so both describe each vector with the same inputs.
 */
final class GoldenInputs {
  private GoldenInputs() {}

  static final Proc JOB = Proc.wildcard("testjob");
  static final Proc RANK0 = Proc.of("testjob", 0);
  static final Proc RANK1 = Proc.of("testjob", 1);
  static final Proc CHILD0 = Proc.of("childjob", 0);

  /** Sorted as fences, connects and disconnects sort them (nspace, then rank unsigned). */
  static final List<Proc> TWO_NSPACES = List.of(CHILD0, JOB);

  static final List<Proc> TWO_RANKS = List.of(RANK0, RANK1);

  static final List<Info> COLLECT = List.of(Info.of("pmix.collect", true));

  static final List<Info> GET_DIRECTIVES =
      List.of(Info.of("pmix.immediate", true), Info.of("pmix.timeout", Value.of(5)));

  static final List<Info> PUBLISHED =
      List.of(Info.of("svc.name", "port123"), Info.of("pmix.range", DataRange.SESSION.toValue()));

  static final List<Info> WAIT = List.of(Info.of("pmix.wait", true));

  static final List<Info> EVENT_INFO = List.of(Info.of("my.event.data", "hello-event"));

  static final List<Status> TWO_CODES = List.of(Status.of(-31337), Status.of(-5001));

  static final List<Value.Query> QUERIES =
      List.of(
          new Value.Query(List.of("pmix.qry.ns"), List.of()),
          new Value.Query(List.of("my.host.query"), List.of(Info.of("pmix.nspace", "testjob"))));

  static final List<Info> LOG_DATA = List.of(Info.of("pmix.log.stderr", "log-line-from-client\n"));

  static final List<Info> LOG_DIRECTIVES = List.of(Info.of("pmix.log.once", true));

  static final Value.App APP =
      new Value.App(
          "/bin/true", List.of("/bin/true", "arg1"), List.of(), "/home/app", 1, List.of());

  static final Value.App APP2 =
      new Value.App(
          "/usr/bin/env",
          List.of("env", "-i"),
          List.of("A=1"),
          "/tmp",
          2,
          List.of(Info.of("pmix.setup.app", true)));

  static final List<Info> MAPBY = List.of(Info.of("pmix.mapby", "slot"));

  static final List<Info> TIMEOUT = List.of(Info.of("pmix.timeout", Value.of(10)));

  static final List<Info> KILL = List.of(Info.of("pmix.jctrl.kill", true));

  static final byte[] STDIN = "stdin-data\n".getBytes(StandardCharsets.UTF_8);

  static final byte[] STDOUT = "fake-stdout-line-0\n".getBytes(StandardCharsets.UTF_8);

  static Map<String, Value> commitLocal() {
    Map<String, Value> m = new LinkedHashMap<>();
    m.put("loc.key", Value.of("rank0-local"));
    m.put("glob.key", Value.of("rank0-global"));
    m.put("num.key", Value.uint32(1000));
    return m;
  }

  static Map<String, Value> commitRemote() {
    Map<String, Value> m = new LinkedHashMap<>();
    m.put("rem.key", Value.of("rank0-remote"));
    m.put("glob.key", Value.of("rank0-global"));
    m.put("num.key", Value.uint32(1000));
    return m;
  }

  /** Job data as a REQ reply carries it after the namespace: KVAL units. */
  static final List<Value.KVal> JOB_DATA =
      List.of(
          new Value.KVal("pmix.job.size", Value.unsigned(DataType.UINT32, 2)),
          new Value.KVal("pmix.bfrops.mod", Value.of("4.2.2")));

  static final List<Value.PData> LOOKED_UP =
      List.of(new Value.PData(RANK0, "svc.name", Value.of("port123")));

  static final List<Info> ANSWERS = List.of(Info.of("pmix.qry.ns", "testjob,other"));
}
