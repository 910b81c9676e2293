package io.pmix.tool;

/**
 * Receives forwarded output registered with {@link PMIxTool#iofPull}, in the order the server sent
 * it, one piece at a time on the library's callback thread (never on its progress thread, never
 * under a library lock). It may call the non-blocking ({@code ...Async}) forms of the API; a
 * blocking call from here fails with {@link IllegalStateException}. An exception it throws is
 * logged and does not stop later output.
 */
@FunctionalInterface
public interface IofHandler {
  /** Called once per piece of output. */
  void onOutput(IofOutput output);
}
