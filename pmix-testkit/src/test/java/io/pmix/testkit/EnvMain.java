package io.pmix.testkit;

/**
 * A Java main for the fixture's tests: prints what the launcher gave it and exits with {@code
 * args[0] + rank}.
 */
public final class EnvMain {
  private EnvMain() {}

  public static void main(String[] args) {
    String rank = System.getenv("PMIX_RANK");
    System.out.println("rank=" + rank);
    System.out.println("nspace=" + System.getenv("PMIX_NAMESPACE"));
    System.out.println("uri=" + System.getenv("PMIX_SERVER_URI41"));
    // The class path came along: a class of this module and one of a dependency load.
    System.out.println("classpath=" + (JobResult.class.getName() + "," + com.google.common.base.Strings.class.getSimpleName()));
    System.out.flush();
    System.exit(Integer.parseInt(args[0]) + Integer.parseInt(rank));
  }
}
