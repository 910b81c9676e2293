package io.pmix.dataserver.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.common.codec.PmixReader;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.internal.wire.Frame;
import io.pmix.dataserver.Identity;
import io.pmix.dataserver.LookupResult;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The protocol between PMIx servers and a {@link io.pmix.dataserver.DataServer}: ours, not
 * OpenPMIx's, built from the common pieces so that nothing new has to be trusted. Both ends use
 * this class, so what one writes is what the other reads.
 *
 * <h2>Framing</h2>
 *
 * Each message is one frame of the common framing (docs/transport.md §5.1: 16-byte big-endian
 * header of pindex, tag, payload length, padding; then the payload). pindex and tag are written 0
 * and not read. The payload is a sequence of pack units in the PMIx 4.2.2 default encoding (non
 * described, flex128 integers; docs/codec.md), each unit its own count-prefixed pack call.
 *
 * <h2>Messages</h2>
 *
 * A request is {@code UINT8 command}, {@code UINT32 request id}, then the command's fields. A reply
 * is {@code UINT8 command}, {@code UINT32 request id} (both echoed), {@code STATUS status}, then the
 * reply's fields when the status says there are any. Every request gets exactly one reply; replies
 * to waiting lookups may come out of order. An IDENTITY is the six units {@code PROC proc}, {@code
 * UINT32 uid}, {@code UINT32 gid}, {@code UINT32 app number}, {@code UINT32 session}, {@code STRING
 * node} ({@code 0xFFFFFFFF} for an unknown gid, app or session). A KEYS list is {@code SIZE n} and,
 * when n &gt; 0, one unit of n STRINGs; an INFOS list is {@code SIZE n} and, when n &gt; 0, one unit
 * of n INFOs.
 *
 * <table>
 *   <caption>Commands</caption>
 *   <tr><th>code</th><th>request fields</th><th>reply fields after the status</th></tr>
 *   <tr><td>1 HELLO</td><td>{@code STRING "pmix-dataserver"}, {@code UINT32 version (1)},
 *       {@code STRING client name}</td><td>{@code UINT32 server version}</td></tr>
 *   <tr><td>2 PUBLISH</td><td>IDENTITY, INFOS</td><td>none</td></tr>
 *   <tr><td>3 LOOKUP</td><td>IDENTITY, KEYS, INFOS (directives)</td><td>when SUCCESS or
 *       PARTIAL_SUCCESS: {@code SIZE n} and, when n &gt; 0, one unit of n PDATA</td></tr>
 *   <tr><td>4 UNPUBLISH</td><td>IDENTITY, KEYS, INFOS</td><td>none</td></tr>
 *   <tr><td>5 CANCEL</td><td>{@code UINT32 id of a waiting LOOKUP}, {@code STATUS reason}</td>
 *       <td>none (SUCCESS if it was waiting, NOT_FOUND if not; the lookup itself is answered with
 *       the reason)</td></tr>
 *   <tr><td>6 PROC_ENDED</td><td>{@code PROC}</td><td>none</td></tr>
 *   <tr><td>7 APP_ENDED</td><td>{@code STRING nspace}, {@code UINT32 app number}</td><td>none</td></tr>
 *   <tr><td>8 NSPACE_ENDED</td><td>{@code STRING nspace}</td><td>none</td></tr>
 *   <tr><td>9 SESSION_ENDED</td><td>{@code UINT32 session}</td><td>none</td></tr>
 * </table>
 *
 * <h2>Rules</h2>
 *
 * HELLO comes first; anything else first gets {@code PMIX_ERR_INIT} and the connection is closed,
 * as it is after a HELLO with another magic or version ({@code PMIX_ERR_NOT_SUPPORTED}, carrying
 * the server's version). An unknown command gets {@code PMIX_ERR_NOT_SUPPORTED}; fields that do not
 * decode get the decoder's status (e.g. {@code PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER}); bytes
 * after the expected fields are ignored, so a later version may append fields. A frame whose
 * command and request id cannot be read, or whose payload exceeds the server's limit, closes the
 * connection. When a connection closes, the lookups still waiting on it are cancelled.
 *
 * <p>Trust: the server believes the identities a connected PMIx server sends (that server
 * authenticated its own clients). Like PRRTE's data server inside a DVM, it must only be reachable
 * by the PMIx servers it serves.
 */
public final class DsProtocol {
  /** The magic string of HELLO. */
  public static final String MAGIC = "pmix-dataserver";

  /** This protocol's version. */
  public static final int VERSION = 1;

  /** HELLO. */
  public static final int HELLO = 1;
  /** PUBLISH. */
  public static final int PUBLISH = 2;
  /** LOOKUP. */
  public static final int LOOKUP = 3;
  /** UNPUBLISH. */
  public static final int UNPUBLISH = 4;
  /** CANCEL. */
  public static final int CANCEL = 5;
  /** PROC_ENDED. */
  public static final int PROC_ENDED = 6;
  /** APP_ENDED. */
  public static final int APP_ENDED = 7;
  /** NSPACE_ENDED. */
  public static final int NSPACE_ENDED = 8;
  /** SESSION_ENDED. */
  public static final int SESSION_ENDED = 9;

  /** The default largest payload either end accepts: 64 MiB. */
  public static final int DEFAULT_MAX_FRAME_BYTES = 64 << 20;

  private DsProtocol() {}

  /** The leading units of every message. */
  public record Header(int command, int requestId) {}

  /** A message's payload being built: write its fields, then {@link #frame()}. */
  public static final class Message {
    private final ByteBuf buf;
    private final PmixWriter writer;

    private Message(ByteBuf buf) {
      this.buf = buf;
      this.writer = new PmixWriter(buf);
    }

    /** The writer of the fields. */
    public PmixWriter writer() {
      return writer;
    }

    /** The frame carrying the payload; the frame now owns the buffer. */
    public Frame frame() {
      return new Frame(0, 0, buf);
    }

    /** Releases the buffer of a message that will not be sent. */
    public void discard() {
      buf.release();
    }
  }

  /** A request: command and id written. */
  public static Message request(ByteBufAllocator alloc, int command, int requestId) {
    Message m = new Message(alloc.buffer());
    try {
      m.writer.packByteEnum(DataType.UINT8, command);
      m.writer.packUInt32(requestId);
    } catch (RuntimeException e) {
      m.discard();
      throw e;
    }
    return m;
  }

  /** A reply: command, id and status written. */
  public static Message reply(ByteBufAllocator alloc, int command, int requestId, Status status) {
    Message m = request(alloc, command, requestId);
    try {
      m.writer.packStatus(status);
    } catch (RuntimeException e) {
      m.discard();
      throw e;
    }
    return m;
  }

  /** A whole message built by {@code fields}, as a frame; nothing leaks if a field fails. */
  public static Frame build(Message m, Consumer<PmixWriter> fields) {
    try {
      fields.accept(m.writer);
    } catch (RuntimeException e) {
      m.discard();
      throw e;
    }
    return m.frame();
  }

  /** Reads a message's command and request id. */
  public static Header header(PmixReader r) {
    int command = r.unpackByteEnum(DataType.UINT8);
    int id = r.unpackUInt32();
    return new Header(command, id);
  }

  // ---- fields ----

  /** Writes an IDENTITY. */
  public static void writeIdentity(PmixWriter w, Identity id) {
    w.packProc(id.proc());
    w.packUInt32(id.uid());
    w.packUInt32(id.gid());
    w.packUInt32(id.appNumber());
    w.packUInt32(id.sessionId());
    w.packString(id.node());
  }

  /** Reads an IDENTITY; a caller with an unknown uid or a special rank is BAD_PARAM. */
  public static Identity readIdentity(PmixReader r) {
    Proc proc = r.unpackProc();
    int uid = r.unpackUInt32();
    int gid = r.unpackUInt32();
    int app = r.unpackUInt32();
    int session = r.unpackUInt32();
    String node = requireString(r, "node");
    try {
      return new Identity(proc, uid, gid, app, session, node);
    } catch (IllegalArgumentException e) {
      throw new PmixException(Status.ERR_BAD_PARAM, "bad identity: " + e.getMessage());
    }
  }

  /** Writes a KEYS list. */
  public static void writeKeys(PmixWriter w, List<String> keys) {
    w.packSize(keys.size());
    if (!keys.isEmpty()) {
      List<Value> v = new ArrayList<>(keys.size());
      for (String k : keys) {
        v.add(Value.of(k));
      }
      w.pack(DataType.STRING, v);
    }
  }

  /** Reads a KEYS list. */
  public static List<String> readKeys(PmixReader r) {
    int n = count(r);
    List<String> keys = new ArrayList<>(Math.min(n, 1024));
    if (n > 0) {
      List<Value> v = r.unpack(DataType.STRING, n);
      checkCount(v.size(), n, "keys");
      for (Value x : v) {
        String k = x.asString();
        if (k == null) {
          throw new PmixException(Status.ERR_BAD_PARAM, "a NULL key");
        }
        keys.add(k);
      }
    }
    return keys;
  }

  /** Writes an INFOS list. */
  public static void writeInfos(PmixWriter w, List<Info> infos) {
    w.packSize(infos.size());
    if (!infos.isEmpty()) {
      w.packInfos(infos);
    }
  }

  /** Reads an INFOS list. */
  public static List<Info> readInfos(PmixReader r) {
    int n = count(r);
    if (n == 0) {
      return List.of();
    }
    List<Info> infos = r.unpackInfos(n);
    checkCount(infos.size(), n, "infos");
    return infos;
  }

  /** Writes a lookup reply's data (only for SUCCESS and PARTIAL_SUCCESS). */
  public static void writeLookupData(PmixWriter w, LookupResult result) {
    if (!result.found()) {
      return;
    }
    w.packSize(result.data().size());
    if (!result.data().isEmpty()) {
      w.pack(DataType.PDATA, result.data());
    }
  }

  /** Reads a lookup reply after its status. */
  public static LookupResult readLookupData(PmixReader r, Status status) {
    LookupResult empty = LookupResult.of(status);
    if (!empty.found()) {
      return empty;
    }
    int n = count(r);
    if (n == 0) {
      return empty;
    }
    List<Value> v = r.unpack(DataType.PDATA, n);
    checkCount(v.size(), n, "pdata");
    List<Value.PData> data = new ArrayList<>(v.size());
    for (Value x : v) {
      data.add((Value.PData) x);
    }
    return new LookupResult(status, data);
  }

  /** Reads a STRING that must not be NULL. */
  public static String requireString(PmixReader r, String what) {
    String s = r.unpackString();
    if (s == null) {
      throw new PmixException(Status.ERR_BAD_PARAM, "a NULL " + what);
    }
    return s;
  }

  /** A SIZE count, refused beyond what one pack call can hold. */
  private static int count(PmixReader r) {
    long n = r.unpackSize();
    if (n < 0 || n > Integer.MAX_VALUE) {
      throw new PmixException(Status.ERR_OUT_OF_RESOURCE, "count " + Long.toUnsignedString(n));
    }
    return (int) n;
  }

  private static void checkCount(int got, int announced, String what) {
    if (got != announced) {
      throw new PmixException(
          Status.ERR_UNPACK_FAILURE, announced + " " + what + " announced, " + got + " sent");
    }
  }

  /** The name of a command, for logs. */
  public static String commandName(int command) {
    return switch (command) {
      case HELLO -> "HELLO";
      case PUBLISH -> "PUBLISH";
      case LOOKUP -> "LOOKUP";
      case UNPUBLISH -> "UNPUBLISH";
      case CANCEL -> "CANCEL";
      case PROC_ENDED -> "PROC_ENDED";
      case APP_ENDED -> "APP_ENDED";
      case NSPACE_ENDED -> "NSPACE_ENDED";
      case SESSION_ENDED -> "SESSION_ENDED";
      default -> "command " + command;
    };
  }
}
