package io.pmix.common.internal.wire;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.Immutable;

/**
 * An nspace and rank as the handshake replies carry them (a fix256 field and a big-endian u32): the
 * identity a server assigns to a tool, and the server's own. Immutable.
 *
 * @param nspace at most 255 UTF-8 bytes, no NUL
 * @param rank an unsigned 32-bit rank held in an {@code int}
 */
@Immutable
public record PeerId(String nspace, int rank) {
  /** Checks the nspace fits a fix256 field; a violation is a caller mistake. */
  public PeerId {
    requireNonNull(nspace, "nspace");
    WireIo.checkNspace(nspace, WireIo.utf8Length(nspace));
  }

  @Override
  public String toString() {
    return nspace + ":" + Integer.toUnsignedString(rank);
  }
}
