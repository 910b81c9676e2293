package io.pmix.tool;

import java.util.EnumSet;
import java.util.Set;

/** A standard I/O channel of a process, as PMIx forwards it ({@code pmix_iof_channel_t}). */
public enum IofChannel {
  /** Standard input (only pushed, never pulled). */
  STDIN(0x01),
  /** Standard output. */
  STDOUT(0x02),
  /** Standard error. */
  STDERR(0x04),
  /** The diagnostic channel. */
  STDDIAG(0x08);

  private final int bit;

  IofChannel(int bit) {
    this.bit = bit;
  }

  /** The channel's bit on the wire. */
  public int bit() {
    return bit;
  }

  /** The wire bit mask of a set of channels. */
  public static int mask(Set<IofChannel> channels) {
    int m = 0;
    for (IofChannel c : channels) {
      m |= c.bit;
    }
    return m;
  }

  /** The channels of a wire bit mask; unknown bits are ignored. */
  public static Set<IofChannel> fromMask(int mask) {
    Set<IofChannel> out = EnumSet.noneOf(IofChannel.class);
    for (IofChannel c : values()) {
      if ((mask & c.bit) != 0) {
        out.add(c);
      }
    }
    return out;
  }
}
