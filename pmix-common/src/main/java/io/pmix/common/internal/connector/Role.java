package io.pmix.common.internal.connector;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.Immutable;

/**
 * Which library a connector belongs to: it names the library's threads (so a test can look for
 * leftovers by prefix) and the API in messages. Immutable.
 *
 * @param name the short name in thread names, e.g. {@code client}
 * @param api the facade class applications call, e.g. {@code PMIx}, for messages
 */
@Immutable
public record Role(String name, String api) {
  /** The client library, {@code io.pmix.client.PMIx}. */
  public static final Role CLIENT = new Role("client", "PMIx");

  /** The tool library, {@code io.pmix.tool.PMIxTool}. */
  public static final Role TOOL = new Role("tool", "PMIxTool");

  /** Checks the fields. */
  public Role {
    requireNonNull(name, "name");
    requireNonNull(api, "api");
  }

  /** The prefix of every thread this role's library starts: {@code pmix-<name>-}. */
  public String threadPrefix() {
    return "pmix-" + name + "-";
  }

  /** The name of the progress thread (the event loop that owns the connection). */
  public String progressThread() {
    return threadPrefix() + "progress";
  }

  /** The name of the callback thread (where futures complete and handlers run). */
  public String callbackThread() {
    return threadPrefix() + "callback";
  }

  /**
   * The name of the reader thread, which reads a shared-memory data store (and may wait for its
   * writer's lock); started only by cycles that read one.
   */
  public String gdsThread() {
    return threadPrefix() + "gds";
  }
}
