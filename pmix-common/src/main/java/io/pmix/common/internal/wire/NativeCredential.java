package io.pmix.common.internal.wire;

import com.google.errorprone.annotations.Immutable;
import io.pmix.common.PmixException;
import io.pmix.common.Status;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The credential of the {@code native} security module over TCP (docs/transport.md §8.2): the
 * connector's effective uid then effective gid, each a u32 in host byte order, 8 bytes. Written and
 * read as little-endian, the order of every host OpenPMIx runs on here (see {@link
 * ConnectRequestCodec}); the same ids in the identity block are big-endian.
 *
 * <p>Nothing proves these ids over TCP: a C server only compares them with the ids it expects.
 * Immutable.
 *
 * @param uid the effective uid, an unsigned 32-bit value held in an {@code int}
 * @param gid the effective gid, likewise
 */
@Immutable
public record NativeCredential(int uid, int gid) {
  /** The psec module name that goes with this credential (field #1 of the connect request). */
  public static final String MODULE = "native";

  /** The credential's length on the wire. */
  public static final int LENGTH = 8;

  /** The 8 credential bytes. */
  public byte[] toBytes() {
    return ByteBuffer.allocate(LENGTH)
        .order(ByteOrder.LITTLE_ENDIAN)
        .putInt(uid)
        .putInt(gid)
        .array();
  }

  /**
   * Reads a credential. Like the C validator, bytes after the first 8 are ignored.
   *
   * @throws PmixException with {@code ERR_INVALID_CRED} (-12) if fewer than 8 bytes are given
   */
  public static NativeCredential fromBytes(byte[] credential) {
    if (credential.length < LENGTH) {
      throw new PmixException(
          Status.of(-12), "native credential has " + credential.length + " bytes, needs " + LENGTH);
    }
    ByteBuffer b = ByteBuffer.wrap(credential).order(ByteOrder.LITTLE_ENDIAN);
    return new NativeCredential(b.getInt(), b.getInt());
  }

  @Override
  public String toString() {
    return "NativeCredential{uid="
        + Integer.toUnsignedString(uid)
        + ", gid="
        + Integer.toUnsignedString(gid)
        + '}';
  }
}
