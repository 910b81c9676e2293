package io.pmix.distribution;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * io.pmix:pmix-bom has no parent (importing it must bring only its own entries), so nothing in
 * Maven keeps it in step with the reactor: this does. Its version is the build's, and it manages
 * every library module at that version.
 */
class PmixBomTest {
  private static final Path ROOT =
      Path.of(System.getProperty("pmix.repo.root", "..")).toAbsolutePath().normalize();

  @Test
  void theBomManagesEveryModuleAtTheReactorsVersion() throws IOException {
    String parent = Files.readString(ROOT.resolve("pom.xml"), UTF_8);
    String bom = Files.readString(ROOT.resolve("pmix-bom/pom.xml"), UTF_8);
    String version = System.getProperty("pmix.version");
    Matcher own =
        Pattern.compile("<artifactId>pmix-bom</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(bom);
    assertTrue(own.find(), bom);
    assertEquals(version, own.group(1));
    List<String> modules = new ArrayList<>();
    Matcher m = Pattern.compile("<module>(pmix-[^<]+)</module>").matcher(parent);
    while (m.find()) {
      String name = m.group(1);
      if (!List.of("pmix-bom", "pmix-distribution", "pmix-benchmarks").contains(name)) {
        modules.add(name);
      }
    }
    assertTrue(modules.size() >= 6, modules::toString);
    for (String module : modules) {
      Pattern entry =
          Pattern.compile(
              "<groupId>io\\.pmix</groupId>\\s*<artifactId>" + Pattern.quote(module)
                  + "</artifactId>\\s*<version>\\$\\{project\\.version\\}</version>");
      assertTrue(entry.matcher(bom).find(), () -> "pmix-bom lacks " + module);
    }
  }
}
