package io.pmix.common.internal.wire;

/**
 * Netty settings pmix-java chooses for itself unless the application already chose: applied
 * before the server first touches Netty (the client and the tool do not use Netty).
 *
 * <p>{@code io.netty.jfr.enabled=false}: with JFR available, Netty 4.2 loads and registers its
 * Flight Recorder events (about a hundred {@code jdk.jfr} classes) the first time a buffer is
 * allocated, which measured about 150 ms of a cold start here (when the client still used
 * Netty). An application that wants Netty's JFR events sets the property itself (to {@code true}), and this
 * leaves it alone; so does a JVM where Netty was initialized before.
 */
public final class NettyDefaults {
  /** The Netty property that turns its JFR events on or off. */
  public static final String JFR_PROPERTY = "io.netty.jfr.enabled";

  private NettyDefaults() {}

  /** Sets the defaults that the application has not set. Idempotent and cheap. */
  public static void apply() {
    try {
      if (System.getProperty(JFR_PROPERTY) == null) {
        System.setProperty(JFR_PROPERTY, "false");
      }
    } catch (SecurityException e) {
      // A locked-down JVM keeps Netty's default: slower first init, nothing else.
    }
  }
}
