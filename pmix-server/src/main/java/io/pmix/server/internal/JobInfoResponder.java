package io.pmix.server.internal;

import io.pmix.common.Keys;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import io.pmix.common.internal.LazyLogger;
import io.pmix.common.internal.message.Message;
import io.pmix.common.internal.message.ReqReply;
import io.pmix.server.internal.lifecycle.Namespace;
import io.pmix.server.internal.lifecycle.Peer;
import java.lang.System.Logger.Level;
import java.util.function.Supplier;

/**
 * Answers REQ, the job-information request that completes a client's init (docs/commands.md
 * §3.1): no status unit, the namespace, then its job data in the layout of docs/commands.md §6.1
 * (a client reading a shared-memory store: only the session, node and app arrays, docs/gds.md §3).
 * A peer in a namespace made for tools gets what 4.2.2 sends a tool instead
 * (docs/transport.md §11.3): the namespace, then {@code pmix.bfrops.mod} = the tool's version.
 * Progress thread only.
 */
final class JobInfoResponder {
  private static final System.Logger LOG = LazyLogger.of(JobInfoResponder.class);

  private final String hostname;

  JobInfoResponder(String hostname) {
    this.hostname = hostname;
  }

  void handleReq(Peer peer, int tag) {
    Namespace ns = peer.ns();
    if (ns.isToolNamespace()) {
      String nspace = ns.name();
      Value.KVal bfrops = new Value.KVal(Keys.BFROPS_MODULE.name(), Value.of(peer.version()));
      Replies.send(peer, tag, new ToolAnswer(nspace, bfrops, peer.format()));
      return;
    }
    JobData jd;
    try {
      jd = ns.jobData(hostname);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "job data of " + ns.name() + " could not be built", e);
      jd = JobData.empty(ns.nlocalprocs());
    }
    JobData data = jd;
    // A ds21/ds12 client reads the job data from its store (written before this reply): as
    // 4.2.2, it gets only the session, node and app arrays (docs/gds.md §3).
    boolean dstore = peer.connection().readsStore();
    Replies.send(peer, tag, new JobAnswer(ns.name(), data, dstore, peer.format()));
  }

  // Classes, not lambdas: a lambda's first call costs a fresh server 0.1-0.2 ms, here in every
  // job's first init (docs/architecture.md, "First requests").

  /** A client's REQ reply, made when sent: its job data, or only the arrays for a store reader. */
  private static final class JobAnswer implements Supplier<Message> {
    private final String nspace;
    private final JobData data;
    private final boolean dstore;
    private final WireFormat format;

    JobAnswer(String nspace, JobData data, boolean dstore, WireFormat format) {
      this.nspace = nspace;
      this.data = data;
      this.dstore = dstore;
      this.format = format;
    }

    @Override
    public Message get() {
      return new ReqReply(nspace, dstore ? data.arraysBody(format) : data.replyBody(format));
    }
  }

  /** A tool's REQ reply, made when sent: its bfrops module only. */
  private static final class ToolAnswer implements Supplier<Message> {
    private final String nspace;
    private final Value.KVal bfrops;
    private final WireFormat format;

    ToolAnswer(String nspace, Value.KVal bfrops, WireFormat format) {
      this.nspace = nspace;
      this.bfrops = bfrops;
      this.format = format;
    }

    @Override
    public Message get() {
      return new ReqReply(nspace, kval(bfrops, format));
    }
  }

  private static byte[] kval(Value.KVal kv, WireFormat format) {
    WireBuffer b = WireBuffer.allocate(64);
    new PmixWriter(b, format).pack(kv);
    return b.toByteArray();
  }
}
