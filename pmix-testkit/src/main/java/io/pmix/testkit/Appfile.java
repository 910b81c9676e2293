package io.pmix.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code pmixrun --app FILE}: the apps of an MPMD job read from a file, one a line, as mpirun's
 * appfile ({@code -n 2 -x A=1 ./a}). Needed nested: {@code mpirun}, {@code srun} and {@code
 * prterun} take a {@code :} on their own command line as the separator of their own apps, so
 * {@code mpirun -n 3 pmixrun -n 2 ./a : -n 1 ./b} runs {@code ./b} under mpirun, not pmixrun.
 * Words are split at blanks (no quoting, as Open MPI's appfile); {@code #} starts a comment;
 * blank lines are skipped.
 */
final class Appfile {
  private Appfile() {}

  /**
   * {@code options}, the launcher's options only, with {@code --app FILE} at {@code at} replaced
   * by FILE's apps separated by {@code :}.
   *
   * @throws PmixRunOptions.UsageException if FILE cannot be read, has no app, or a line has a
   *     {@code :} or another {@code --app}
   */
  static String[] expand(String[] options, int at) throws PmixRunOptions.UsageException {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < options.length; i++) {
      if (i != at && i != at + 1 && !options[i].equals("--")) {
        out.add(options[i]);
      }
    }
    Path file = Path.of(options[at + 1]);
    List<String> lines;
    try {
      lines = Files.readAllLines(file, UTF_8);
    } catch (IOException e) {
      throw new PmixRunOptions.UsageException("--app " + file + ": cannot read it: " + e);
    }
    int apps = 0;
    for (String line : lines) {
      int hash = line.indexOf('#');
      String l = (hash >= 0 ? line.substring(0, hash) : line).strip();
      if (l.isEmpty()) {
        continue;
      }
      if (apps++ > 0) {
        out.add(":");
      }
      for (String w : l.split("\\s+")) {
        if (w.equals("--app") || w.equals(":")) {
          throw new PmixRunOptions.UsageException("--app " + file + ": '" + w + "' in a line");
        }
        out.add(w);
      }
    }
    if (apps == 0) {
      throw new PmixRunOptions.UsageException("--app " + file + " has no app");
    }
    return out.toArray(new String[0]);
  }
}
