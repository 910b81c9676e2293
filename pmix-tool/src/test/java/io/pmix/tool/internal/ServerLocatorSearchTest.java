package io.pmix.tool.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which files the rendezvous search finds: depth, links, order. */
class ServerLocatorSearchTest {
  @TempDir Path root;

  private List<Path> search() {
    ToolSettings st = ToolSettings.parse(Map.of("PMIX_SYSTEM_TMPDIR", root.toString()), List.of());
    Predicate<String> name =
        new Predicate<String>() {
          @Override
          public boolean test(String n) {
            return n.startsWith("pmix.host.tool");
          }
        };
    return ServerLocator.search(st, name);
  }

  @Test
  void filesDownToTheMaximumDepthNearestFirstAndNoLinkFollowed() throws Exception {
    Path dir = root;
    for (int depth = 1; depth <= ServerLocator.MAX_DEPTH + 1; depth++) {
      Files.writeString(dir.resolve("pmix.host.tool." + depth), "x");
      Files.writeString(dir.resolve("other." + depth), "x");
      dir = Files.createDirectory(dir.resolve("d" + depth));
    }
    Files.writeString(root.resolve("pmix.host.tool.z"), "x");
    // A directory named like a file, a link to a matching file and one to a directory holding
    // one: only the file itself is found, at its own place.
    Files.createDirectory(root.resolve("pmix.host.tool.dir"));
    Path away = Files.createDirectory(root.resolve("d1").resolve("away"));
    Files.writeString(away.resolve("pmix.host.tool.behind"), "x");
    Files.createSymbolicLink(root.resolve("pmix.host.tool.link"), root.resolve("pmix.host.tool.1"));
    Files.createSymbolicLink(root.resolve("d1").resolve("d2").resolve("jump"), away);
    List<String> want = new ArrayList<>();
    want.add("pmix.host.tool.1");
    want.add("pmix.host.tool.z");
    want.add("d1/pmix.host.tool.2");
    want.add("d1/away/pmix.host.tool.behind");
    want.add("d1/d2/pmix.host.tool.3");
    want.add("d1/d2/d3/pmix.host.tool.4");
    want.add("d1/d2/d3/d4/pmix.host.tool.5");
    want.add("d1/d2/d3/d4/d5/pmix.host.tool.6");
    assertEquals(6, ServerLocator.MAX_DEPTH, "the list above is for a depth of 6");
    List<String> found = new ArrayList<>();
    for (Path p : search()) {
      found.add(root.relativize(p).toString());
    }
    assertEquals(want, found);
  }

  @Test
  void aMissingRootFindsNothing() throws Exception {
    Files.delete(root);
    assertEquals(List.of(), search());
  }
}
