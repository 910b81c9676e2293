# Sourced by bin/pmixrun, bin/pmix-state, bin/pmix-dataserver and bin/pmix-decode: finds the
# class path to run a pmix-java tool on, in either of two layouts:
#   - the distribution (pmix-java-VERSION/, which `mvn package` leaves in
#     pmix-distribution/target/): lib/*.jar beside bin/; never builds, needs no Maven;
#   - the repository: a module's built jar and its runtime class path (MODULE/target/
#     classpath.txt, written by the module's build at package time), built with Maven when they
#     are missing or stale (a listed jar no longer exists).
# pmix_setup ME MODULE sets pmix_cp (the class path) and java_cmd (java from JAVA_HOME, else the
# PATH); testkit_setup ME is pmix_setup ME pmix-testkit, also setting testkit_cp.
# MVN_FLAGS adds Maven flags for that build (e.g. MVN_FLAGS=-o when offline).

testkit_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
testkit_target="$testkit_root/pmix-testkit/target"

# The distribution's lib/, or empty in the repository.
pmix_dist_lib=""
for _j in "$testkit_root"/lib/pmix-testkit-*.jar; do
  [ -f "$_j" ] && pmix_dist_lib="$testkit_root/lib"
done
unset _j

# _pmix_find MODULE: sets pmix_jar to MODULE's built jar; fails if it or its classpath.txt is
# missing, or a jar listed there is gone.
_pmix_find() {
  local target="$testkit_root/$1/target" j entry
  pmix_jar=""
  for j in "$target/$1"-*.jar; do
    case "$j" in
      *-tests.jar | *-sources.jar | *-javadoc.jar) ;;
      *) [ -f "$j" ] && pmix_jar="$j" ;;
    esac
  done
  [ -n "$pmix_jar" ] && [ -f "$target/classpath.txt" ] || return 1
  local IFS=:
  for entry in $(cat "$target/classpath.txt"); do
    [ -e "$entry" ] || return 1
  done
  return 0
}

pmix_setup() {
  local me="$1" module="$2"
  java_cmd="java"
  [ -n "${JAVA_HOME:-}" ] && java_cmd="$JAVA_HOME/bin/java"
  if [ -n "$pmix_dist_lib" ]; then
    pmix_cp="$pmix_dist_lib/*"
    return 0
  fi
  if ! _pmix_find "$module"; then
    echo "$me: $module is not built; building it (mvn -B -q -pl $module -am package -DskipTests)" >&2
    # shellcheck disable=SC2086
    if ! (cd "$testkit_root" && mvn -B -q ${MVN_FLAGS:-} -pl "$module" -am package -DskipTests >&2); then
      echo "$me: the build failed; build by hand with:" >&2
      echo "  (cd '$testkit_root' && mvn -B -pl $module -am package -DskipTests)" >&2
      return 2
    fi
    if ! _pmix_find "$module"; then
      echo "$me: the build did not produce $testkit_root/$module/target/classpath.txt and the jar" >&2
      return 2
    fi
  fi
  pmix_cp="$pmix_jar:$(cat "$testkit_root/$module/target/classpath.txt")"
  return 0
}

testkit_setup() {
  pmix_setup "$1" pmix-testkit || return $?
  testkit_cp="$pmix_cp"
  return 0
}

# testkit_snapshot ME DIR: after testkit_setup, copies every entry of testkit_cp into DIR (emptied
# first) and sets snap_cp to the copies. For benchmarks: a build running meanwhile in this work
# tree (mvn package/install) rewrites target/*.jar under a running JVM, which then fails to load
# classes (seen: NoClassDefFoundError in pmixrun's job thread and a job that never ends); the copy
# also keeps every run of a sitting on the same code. DIR must be absolute. Repository layout only.
testkit_snapshot() {
  local me="$1" dir="$2" entry dest i=0
  local -a entries
  rm -rf "$dir"
  mkdir -p "$dir" || return 1
  snap_cp=""
  IFS=: read -r -a entries <<< "$testkit_cp"
  for entry in "${entries[@]}"; do
    i=$((i + 1))
    dest="$dir/$i-$(basename "$entry")"
    cp -r "$entry" "$dest" || { echo "$me: cannot copy $entry" >&2; return 1; }
    snap_cp="${snap_cp:+$snap_cp:}$dest"
  done
  return 0
}
