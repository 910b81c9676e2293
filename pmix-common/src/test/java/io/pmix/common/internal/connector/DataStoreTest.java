package io.pmix.common.internal.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pmix.common.DataArray;
import io.pmix.common.Info;
import io.pmix.common.Proc;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireFormat;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client's hash-style store: the REQ reply of docs/commands.md §9.1 ("min" registration of job
 * {@code testjob}: ranks 0 and 1 on {@code vm}, 2 and 3 on {@code remotenode}) and how gets are
 * resolved against it (docs/commands.md §6.3).
 */
class DataStoreTest {
  private static final String NS = "testjob";
  private static final Proc WILD = Proc.wildcard(NS);
  private DataStore store;

  private static Value.KVal kv(String k, Value v) {
    return new Value.KVal(k, v);
  }

  private static Value infoArray(Info... infos) {
    return DataArray.ofInfos(List.of(infos));
  }

  private static byte[] pblob(int rank, String host, int nodeid) {
    ByteBuf b = Unpooled.buffer();
    PmixWriter w = new PmixWriter(b);
    w.packRank(rank);
    w.pack(kv("pmix.hname", Value.of(host)));
    w.pack(kv("pmix.nodeid", Value.uint32(nodeid)));
    w.pack(kv("pmix.lrank", Value.uint16(rank % 2)));
    w.pack(kv("pmix.nrank", Value.uint16(rank % 2)));
    byte[] out = new byte[b.readableBytes()];
    b.readBytes(out);
    return out;
  }

  /** The body of the REQ reply after its nspace string, as the 4.2.2 server sent it. */
  static ByteBuf jobData() {
    ByteBuf b = Unpooled.buffer();
    PmixWriter w = new PmixWriter(b);
    w.pack(kv("pmix.job.size", Value.uint32(4)));
    w.pack(kv("pmix.num.nodes", Value.uint32(2)));
    w.pack(kv("pmix.nlist", Value.of("vm,remotenode")));
    w.pack(kv("pmix.max.size", Value.uint32(4)));
    w.pack(kv("pmix.bfrops.mod", Value.of("4.2.2rc2")));
    w.pack(
        kv(
            "pmix.ssn.arr",
            infoArray(
                Info.of("pmix.session.id", Value.uint32(0xffffffffL)),
                new Info("pmix.univ.size", Info.ARRAY_END, Value.uint32(4)))));
    w.pack(
        kv(
            "pmix.node.arr",
            infoArray(
                Info.of("pmix.hname", "vm"),
                Info.of("pmix.nodeid", Value.uint32(0)),
                Info.of("pmix.lpeers", "0,1"),
                Info.of("pmix.lldr", Value.rank(0)),
                new Info("pmix.local.size", Info.ARRAY_END, Value.uint32(2)))));
    w.pack(
        kv(
            "pmix.node.arr",
            infoArray(
                Info.of("pmix.hname", "remotenode"),
                Info.of("pmix.nodeid", Value.uint32(1)),
                Info.of("pmix.lpeers", "2,3"),
                Info.of("pmix.lldr", Value.rank(2)),
                new Info("pmix.local.size", Info.ARRAY_END, Value.uint32(2)))));
    for (int r = 0; r < 4; r++) {
      w.pack(kv("pmix.pblob", Value.of(pblob(r, r < 2 ? "vm" : "remotenode", r < 2 ? 0 : 1))));
    }
    return b;
  }

  @BeforeEach
  void load() {
    store = new DataStore(Proc.of(NS, 0), "envhost", WireFormat.DEFAULT);
    store.ingestJobData(NS, new PmixReader(jobData()));
  }

  private Value found(Proc p, String key, Info... directives) {
    DataStore.Lookup l = store.lookup(p, key, List.of(directives));
    return assertInstanceOf(DataStore.Lookup.Found.class, l, key + " of " + p).value();
  }

  private void absent(Proc p, String key) {
    assertInstanceOf(DataStore.Lookup.Absent.class, store.lookup(p, key, List.of()), key);
  }

  private void miss(Proc p, String key) {
    assertInstanceOf(DataStore.Lookup.Miss.class, store.lookup(p, key, List.of()), key);
  }

  @Test
  void jobLevelKeys() {
    assertEquals(Value.uint32(4), found(WILD, "pmix.job.size"));
    assertEquals(Value.of("vm,remotenode"), found(WILD, "pmix.nlist"));
    // A job key asked of a specific rank falls back to the job level, as in C.
    assertEquals(Value.uint32(4), found(Proc.of(NS, 3), "pmix.job.size"));
    assertEquals(Value.of(NS), found(WILD, "pmix.nspace"));
  }

  @Test
  void realmKeysFollowTheNodeOfTheRankAsked() {
    assertEquals(Value.uint32(2), found(WILD, "pmix.local.size"));
    assertEquals(Value.of("0,1"), found(WILD, "pmix.lpeers"));
    assertEquals(Value.of("2,3"), found(Proc.of(NS, 3), "pmix.lpeers"));
    assertEquals(Value.rank(2), found(Proc.of(NS, 2), "pmix.lldr"));
    assertEquals(
        Value.of("2,3"), found(WILD, "pmix.lpeers", Info.of("pmix.hname", "remotenode")));
    assertEquals(
        Value.of("2,3"), found(WILD, "pmix.lpeers", Info.of("pmix.nodeid", Value.uint32(1))));
    // Unlike 4.2.2, the node id of a rank on another node is found.
    assertEquals(Value.uint32(1), found(Proc.of(NS, 2), "pmix.nodeid"));
    assertEquals(Value.uint32(4), found(WILD, "pmix.univ.size"));
    // Realm keys nobody registered fail locally: the server is never asked.
    absent(WILD, "pmix.node.size");
    absent(WILD, "pmix.app.size");
    absent(WILD, "pmix.tmpdir");
  }

  @Test
  void perRankKeysAndOwnIdentity() {
    assertEquals(Value.uint16(1), found(Proc.of(NS, 1), "pmix.lrank"));
    assertEquals(Value.of("remotenode"), found(Proc.of(NS, 3), "pmix.hname"));
    assertEquals(Value.rank(0), found(Proc.of(NS, Proc.RANK_INVALID), "pmix.rank"));
    assertEquals(Value.rank(0), found(Proc.of(NS, 0), "pmix.rank"));
    assertEquals(Proc.of(NS, 0), found(Proc.of(NS, 0), "pmix.procid"));
    assertEquals("vm", store.myHostname());
  }

  @Test
  void peersDataComesFromTheServerOnceAndIsThenCached() {
    miss(Proc.of(NS, 2), "glob.key");
    miss(WILD, "pmix.something.else");
    // docs/commands.md §9.6: the GETNB reply's blob for rank 2.
    byte[] reply =
        Bytes.of(
            "02 00 02 3e 02 10", "'testjob", "02 02 12", "'glob.key", "03 1a", "'rank2-global",
            "02 10", "'rem.key", "03 1a", "'rank2-remote");
    PmixReader r = new PmixReader(Unpooled.wrappedBuffer(reply));
    assertEquals(0, r.unpackStatus().code());
    List<byte[]> blobs = new ArrayList<>();
    while (r.hasRemaining()) {
      blobs.add(r.unpackOne(io.pmix.common.DataType.BYTE_OBJECT).asBytes());
    }
    assertEquals(1, blobs.size());
    store.ingestGetBlob(blobs.get(0), Proc.of(NS, 2));
    assertEquals(Value.of("rank2-global"), found(Proc.of(NS, 2), "glob.key"));
    assertEquals(Value.of("rank2-remote"), found(Proc.of(NS, 2), "rem.key"));
    assertEquals(Value.of("rank2-remote"), found(Proc.of(NS, Proc.RANK_UNDEF), "rem.key"));
  }

  /**
   * The answers published for other threads are exactly what the lookup answers for rank
   * WILDCARD without directives, realm keys included, and nothing else.
   */
  @Test
  void publishedJobAnswersAreTheLookupsAnswers() {
    store.publishOwnJobAnswers();
    for (String key :
        List.of("pmix.job.size", "pmix.num.nodes", "pmix.nlist", "pmix.max.size",
            "pmix.univ.size", "pmix.local.size", "pmix.lpeers", "pmix.lldr")) {
      assertEquals(found(WILD, key), store.ownJobAnswer(key), key);
    }
    for (String key : List.of("pmix.hname", "pmix.nodeid", "pmix.lrank", "no.such.key")) {
      DataStore.Lookup l = store.lookup(WILD, key, List.of());
      assertEquals(
          l instanceof DataStore.Lookup.Found f ? f.value() : null, store.ownJobAnswer(key), key);
    }
    assertNull(store.ownJobAnswer("no.such.key"));
  }

  /** A write of this process's namespace drops them (the gets then ask the store again). */
  @Test
  void aWriteOfTheOwnNamespaceDropsThePublishedAnswers() {
    store.publishOwnJobAnswers();
    ByteBuf b = Unpooled.buffer();
    new PmixWriter(b).pack(kv("pmix.job.size", Value.uint32(8)));
    store.ingestJobData("other", new PmixReader(b.copy()));
    assertEquals(Value.uint32(4), store.ownJobAnswer("pmix.job.size")); // another namespace
    store.ingestJobData(NS, new PmixReader(b));
    assertNull(store.ownJobAnswer("pmix.job.size"));
    store.publishOwnJobAnswers();
    assertEquals(found(WILD, "pmix.job.size"), store.ownJobAnswer("pmix.job.size"));
    store.clear();
    assertNull(store.ownJobAnswer("pmix.job.size"));
  }

  /**
   * An answer kept for a peer's key (what the get was given) holds until that peer's data or its
   * namespace's job data is written; none is kept for this process or a special rank, whose
   * answers change without a write here.
   */
  @Test
  void keptPeerAnswersAreDroppedByTheWritesTheyDependOn() {
    Proc peer = Proc.of(NS, 2);
    Proc elsewhere = Proc.of("other", 2);
    store.rememberPeerAnswer(peer, "k", Value.of(1));
    store.rememberPeerAnswer(elsewhere, "k", Value.of(3));
    assertEquals(Value.of(1), store.peerAnswer(peer, "k"));
    assertNull(store.peerAnswer(peer, "other.key"));
    assertNull(store.peerAnswer(Proc.of(NS, 3), "k"));
    store.ingestGetBlob(peerBlob(Proc.of(NS, 3), "k", Value.of(2)), Proc.of(NS, 3));
    assertEquals(Value.of(1), store.peerAnswer(peer, "k"), "a blob of another peer");
    store.ingestGetBlob(peerBlob(peer, "k", Value.of(2)), peer);
    assertNull(store.peerAnswer(peer, "k"), "a blob of that peer");

    store.rememberPeerAnswer(peer, "k", Value.of(1));
    ByteBuf b = Unpooled.buffer();
    new PmixWriter(b).pack(kv("pmix.job.size", Value.uint32(8)));
    store.ingestJobData("other", new PmixReader(b.copy()));
    assertEquals(Value.of(1), store.peerAnswer(peer, "k"), "job data of another namespace");
    assertNull(store.peerAnswer(elsewhere, "k"), "job data of its namespace");
    store.rememberPeerAnswer(elsewhere, "k", Value.of(3));
    store.ingestJobData(NS, new PmixReader(b));
    assertNull(store.peerAnswer(peer, "k"), "job data of its namespace");
    assertNull(store.peerAnswer(elsewhere, "k"), "job data of this process's namespace");

    store.rememberPeerAnswer(peer, "k", Value.of(1));
    store.rememberPeerAnswer(elsewhere, "k", Value.of(3));
    store.forgetNamespace("other");
    assertNull(store.peerAnswer(elsewhere, "k"), "its namespace forgotten");
    assertEquals(Value.of(1), store.peerAnswer(peer, "k"), "another namespace forgotten");

    store.rememberPeerAnswer(peer, "k", Value.of(1));
    store.clear();
    assertNull(store.peerAnswer(peer, "k"), "the last finalize");
    assertEquals(0, store.size());

    store.rememberPeerAnswer(Proc.of(NS, 0), "k", Value.of(1));
    store.rememberPeerAnswer(Proc.wildcard(NS), "k", Value.of(1));
    assertNull(store.peerAnswer(Proc.of(NS, 0), "k"), "this process");
    assertNull(store.peerAnswer(Proc.wildcard(NS), "k"), "a special rank");
  }

  private static byte[] peerBlob(Proc p, String key, Value v) {
    ByteBuf b = Unpooled.buffer();
    PmixWriter w = new PmixWriter(b);
    w.pack(p);
    w.pack(kv(key, v));
    byte[] blob = new byte[b.readableBytes()];
    b.readBytes(blob);
    return blob;
  }

  @Test
  void ownPutsAreSeenAtOnce() {
    miss(Proc.of(NS, 0), "my.key");
    store.putOwn("my.key", Value.of(5));
    assertEquals(Value.of(5), found(Proc.of(NS, 0), "my.key"));
  }

  @Test
  void anotherNamespacesJobDataArrivesInAWildcardBlob() {
    miss(Proc.wildcard("other"), "pmix.job.size");
    ByteBuf b = Unpooled.buffer();
    PmixWriter w = new PmixWriter(b);
    w.pack(Proc.wildcard("other"));
    w.pack(kv("pmix.job.size", Value.uint32(3)));
    byte[] blob = new byte[b.readableBytes()];
    b.readBytes(blob);
    store.ingestGetBlob(blob, Proc.wildcard("other"));
    assertEquals(Value.uint32(3), found(Proc.wildcard("other"), "pmix.job.size"));
  }
}
