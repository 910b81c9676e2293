# Sourced by bin/pmixrun and bin/pmix-state: finds the built pmix-testkit jar and its runtime
# classpath (pmix-testkit/target/classpath.txt, written by the module's build at package time),
# building them with Maven when they are missing or stale (a listed jar no longer exists).
# Sets: testkit_cp (the class path), java_cmd (java from JAVA_HOME, else the PATH).
# MVN_FLAGS adds Maven flags for that build (e.g. MVN_FLAGS=-o when offline).

testkit_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
testkit_target="$testkit_root/pmix-testkit/target"

_testkit_find() {
  testkit_jar=""
  local j
  for j in "$testkit_target"/pmix-testkit-*.jar; do
    case "$j" in
      *-tests.jar | *-sources.jar | *-javadoc.jar) ;;
      *) [ -f "$j" ] && testkit_jar="$j" ;;
    esac
  done
  [ -n "$testkit_jar" ] && [ -f "$testkit_target/classpath.txt" ] || return 1
  local entry
  local IFS=:
  for entry in $(cat "$testkit_target/classpath.txt"); do
    [ -e "$entry" ] || return 1
  done
  return 0
}

testkit_setup() {
  local me="$1"
  if ! _testkit_find; then
    echo "$me: pmix-testkit is not built; building it (mvn -B -q -pl pmix-testkit -am package -DskipTests)" >&2
    # shellcheck disable=SC2086
    if ! (cd "$testkit_root" && mvn -B -q ${MVN_FLAGS:-} -pl pmix-testkit -am package -DskipTests >&2); then
      echo "$me: the build failed; build by hand with:" >&2
      echo "  (cd '$testkit_root' && mvn -B -pl pmix-testkit -am package -DskipTests)" >&2
      return 2
    fi
    if ! _testkit_find; then
      echo "$me: the build did not produce $testkit_target/classpath.txt and the jar" >&2
      return 2
    fi
  fi
  testkit_cp="$testkit_jar:$(cat "$testkit_target/classpath.txt")"
  java_cmd="java"
  [ -n "${JAVA_HOME:-}" ] && java_cmd="$JAVA_HOME/bin/java"
  return 0
}

# testkit_snapshot ME DIR: after testkit_setup, copies every entry of testkit_cp into DIR (emptied
# first) and sets snap_cp to the copies. For benchmarks: a build running meanwhile in this work
# tree (mvn package/install) rewrites target/*.jar under a running JVM, which then fails to load
# classes (seen: NoClassDefFoundError in pmixrun's job thread and a job that never ends); the copy
# also keeps every run of a sitting on the same code. DIR must be absolute.
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
