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

# Every pmixrun pays this file's start-up: no process is started here unless needed (each fork
# and exec costs ~7 ms on a small VM; the first version spent ~250 ms of a job's fixed cost here).
_pmix_here="${BASH_SOURCE[0]%/*}"
[ "$_pmix_here" = "${BASH_SOURCE[0]}" ] && _pmix_here=.
testkit_root="$(cd "$_pmix_here/../.." && pwd)"
unset _pmix_here
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
  pmix_module_cp=""
  IFS= read -r pmix_module_cp < "$target/classpath.txt" || [ -n "$pmix_module_cp" ] || true
  local IFS=:
  for entry in $pmix_module_cp; do
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
  pmix_cp="$pmix_jar:$pmix_module_cp"
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

# pmixrun_jvm_flags: sets pmixrun_flags to the JVM options of pmixrun's own JVM (bin/pmixrun and
# the benchmarks that run its command line): the serial collector and C1 only (a launcher's job is
# short; measured in docs/architecture.md "Start-up of pmixrun"), and one compiler thread: on a
# 2-core machine the second one took the CPU that the server and the starting processes needed
# (-n 8 of C clients: fences 2.6-2.9 -> 2.2-2.3 ms, the slowest PMIx_Init lower too; no loss over
# 300 fences). Left out when PMIXRUN_JAVA_OPTS sets the compilers itself (with full tiered
# compilation the JVM refuses to start with fewer than 2). Native access for the unnamed module:
# the server loads native code (Netty's epoll transport, libpmixjava) with System.load and
# loadLibrary, restricted methods from JDK 24 on (JEP 472), which otherwise print four warning
# lines at every run; JDK 17 knows the option too (no start-up cost measured: 214 and 209 ms).
pmixrun_jvm_flags() {
  pmixrun_flags="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 --enable-native-access=ALL-UNNAMED"
  case " ${PMIXRUN_JAVA_OPTS:-} " in
    *Tiered* | *CICompilerCount* | *' -Xint '* | *' -Xcomp '*) ;;
    *) pmixrun_flags="$pmixrun_flags -XX:CICompilerCount=1" ;;
  esac
}

# pmixrun_cds CP: sets cds_flags to the JVM options that make pmixrun's JVM start from a
# class-data sharing archive of the classes a job loads (JDK 17's dynamic AppCDS; measured on a
# 2-core machine: a job's fixed cost 0.32 -> 0.17 s, a C client's PMIx_Init at -n 8 60 -> 35 ms,
# docs/architecture.md "Start-up of pmixrun"); on a JDK that has them (25 and later), an AOT cache
# instead (JEPs 483, 514, 515: the classes linked too, and the training's method profiles): the
# fixed cost 243 ms with a dynamic archive on JDK 25, 203 ms with the AOT cache (JDK 17 with its
# archive: 223 ms). The archive is made by a training job of two Java
# demo clients, the first time pmixrun runs, in pmix-testkit/target/cds/ (repository) or the
# distribution's cds/, else ${XDG_CACHE_HOME:-~/.cache}/pmix-java/cds when that is not writable.
# One archive per class path and java (its name hashes both: bench-server's copy has its own),
# made again when the java binary or an entry of CP is newer than it (a rebuilt jar, an updated
# JDK; the JVM also ignores, silently, an archive whose jars or JVM differ). A failed training is
# remembered until one of them changes. PMIXRUN_CDS=0 turns it off. Empty cds_flags: no archive.
# The training also copies Netty's epoll library beside the archive (BASE.native/), which later
# runs name as java.library.path. Cost per run: one cksum process; the freshness checks are shell
# built-ins.
pmixrun_cds() {
  local cp="$1" dir key base archive e f java_bin stale
  cds_flags=""
  [ "${PMIXRUN_CDS:-1}" = 0 ] && return 0
  if [ -n "$pmix_dist_lib" ]; then dir="$pmix_dist_lib/../cds"; else dir="$testkit_target/cds"; fi
  if ! { { [ -d "$dir" ] || mkdir -p "$dir" 2> /dev/null; } && [ -w "$dir" ]; }; then
    dir="${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/pmix-java/cds"
    { [ -d "$dir" ] || mkdir -p "$dir" 2> /dev/null; } && [ -w "$dir" ] || return 0
  fi
  java_bin="$(command -v "$java_cmd" || true)"
  key=$(printf '%s\n%s\n' "$java_bin" "$cp" | cksum)
  key="${key%% *}"
  base="$dir/pmixrun-$key"
  # The archive made last for this java and class path: an AOT cache or a dynamic archive.
  archive="$base.jsa"
  [ -s "$base.aot" ] && archive="$base.aot"
  # The newest of what the archive depends on, against the archive (or the failure marker).
  _pmix_stale() {
    local IFS=: e f
    [ -n "$java_bin" ] && [ "$java_bin" -nt "$1" ] && return 0
    for e in $cp; do
      # shellcheck disable=SC2086 # a distribution's lib/* is expanded here on purpose
      for f in $e; do [ "$f" -nt "$1" ] && return 0; done
    done
    return 1
  }
  # A training job of its own (JVM options: $@), outside any PMIx environment this pmixrun was
  # started in; output discarded. Its module options must be pmixrun_jvm_flags' (an AOT cache
  # made without --enable-native-access is refused by a JVM run with it).
  _pmix_train() {
    env $(compgen -e | grep '^PMIX_' | sed 's/^/-u /') \
      "$java_cmd" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 --enable-native-access=ALL-UNNAMED \
      -XX:-UsePerfData "$@" "-Dio.pmix.pmixrun.nativeCopy=$base.native" \
      "-Djava.io.tmpdir=${PMIX_SERVER_TMPDIR:-${TMPDIR:-/tmp}}" \
      -cp "$cp" io.pmix.testkit.PmixRun -n 2 --timeout 60 -- \
      "$java_cmd" -XX:TieredStopAtLevel=1 -XX:-UsePerfData -cp "$cp" \
      io.pmix.testkit.demo.JavaDemoClient \
      > /dev/null 2>&1
  }
  stale=0
  if [ -s "$archive" ]; then
    _pmix_stale "$archive" && stale=1
  elif [ ! -e "$base.failed" ] || _pmix_stale "$base.failed"; then
    stale=1
  fi
  if [ "$stale" = 1 ]; then
    rm -f "$base.failed"
    rm -rf "$base.native"
    [ -t 2 ] && echo "pmixrun: making a class-data sharing archive for faster starts (once per build)" >&2
    # An AOT cache where java has them (JDK 25: -XX:AOTCacheOutput trains and writes it in one
    # run; an older JVM refuses the option at once), else a dynamic archive. A JVM still mapping
    # the old file keeps its mapping when the new one replaces it.
    if _pmix_train "-XX:AOTCacheOutput=$base.aot.$$" && [ -s "$base.aot.$$" ]; then
      mv -f "$base.aot.$$" "$base.aot"
      rm -f "$base.jsa"
      archive="$base.aot"
    elif rm -f "$base.aot.$$" && _pmix_train -Xshare:auto "-XX:ArchiveClassesAtExit=$base.jsa.$$" \
        -Xlog:cds=off -Xlog:cds+dynamic=off && [ -s "$base.jsa.$$" ]; then
      mv -f "$base.jsa.$$" "$base.jsa"
      rm -f "$base.aot"
      archive="$base.jsa"
    else
      rm -f "$base.jsa.$$" "$base.aot" "$base.jsa"
      : > "$base.failed"
      [ -t 2 ] && echo "pmixrun: the archive could not be made; starting without it" >&2
    fi
  fi
  if [ -s "$archive" ]; then
    case "$archive" in
      *.aot) cds_flags="-XX:AOTCache=$archive -Xlog:aot=off -Xlog:cds=off" ;;
      *) cds_flags="-XX:SharedArchiveFile=$archive -Xlog:cds=off -Xlog:cds+dynamic=off" ;;
    esac
    # Netty's epoll library as the training copied it: found on java.library.path, Netty loads it
    # without searching every jar for it and unpacking it to a fresh temporary file (22 ms of a
    # job's fixed cost; the copy is made and removed with the archive).
    for f in "$base.native"/libnetty_transport_native_epoll_*.so; do
      [ -s "$f" ] && cds_flags="$cds_flags -Djava.library.path=$base.native"
      break
    done
  fi
  return 0
}
