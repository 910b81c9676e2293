package io.pmix.common;

/**
 * Receives the events it was registered for with the client's or the tool's {@code
 * registerEventHandler}.
 *
 * <p>Handlers run one at a time on the library's callback thread, never on its progress thread
 * and never while a library lock is held. A handler may call the non-blocking ({@code ...Async})
 * forms of the API; a blocking call of the same library from a handler fails with {@link
 * IllegalStateException}, because it would wait for the very thread it occupies. An exception
 * thrown by a handler is logged and does not stop delivery to other handlers.
 */
@FunctionalInterface
public interface EventHandler {
  /** Called once per matching event. */
  void onEvent(Event event);
}
