package io.pmix.dataserver.internal;

import io.pmix.common.DataType;
import io.pmix.common.Info;
import io.pmix.common.codec.PmixWriter;
import io.pmix.common.codec.WireBuffer;
import io.pmix.common.codec.WireFormat;
import java.util.List;

/**
 * What an item is charged against its publisher's per-uid cap. An accounting figure that grows
 * with what the publisher stored, whatever the type: each datum costs its size as PMIx packs it
 * (key, directive flags, type and value, which is what the publisher sent), each accessor id 4
 * bytes, and each item {@value #ITEM_OVERHEAD} bytes of bookkeeping, so that many tiny keys are
 * not free.
 */
public final class Sizes {
  /** The fixed charge of one item. */
  public static final long ITEM_OVERHEAD = 64;

  /** The charge of one accessor id. */
  public static final long ID_BYTES = 4;

  private Sizes() {}

  /**
   * The charge of one datum: its packed size, packed into an array (a Netty buffer's bounds and
   * reference checks on every byte cost a first publish in a fresh server tens of microseconds).
   */
  public static long datum(Info info) {
    WireBuffer b = WireBuffer.allocate();
    new PmixWriter(b, WireFormat.DEFAULT).pack(DataType.INFO, List.of(info));
    return b.writerIndex();
  }

  /** The charge of an item holding these data under these permissions. */
  public static long item(Iterable<Info> data, Access access) {
    long total = ITEM_OVERHEAD + ID_BYTES * access.idCount();
    for (Info i : data) {
      total += datum(i);
    }
    return total;
  }
}
