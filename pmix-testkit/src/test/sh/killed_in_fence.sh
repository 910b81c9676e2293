#!/bin/bash
# A job in which rank 2 is killed (SIGKILL) while it waits in a fence; ranks 0 and 1 wait in that
# fence too, and rank 3 joins it only once rank 2 is dead. The others must finish, or fail
# cleanly with an error status, and the server must stay up. Usage: killed_in_fence.sh CLIENT
client=$1
dir=${PMIX_SERVER_TMPDIR:-/tmp}
marker="$dir/killed-in-fence.$PMIX_NAMESPACE.done"
case "$PMIX_RANK" in
  2)
    out=$(mktemp "$dir/killed-in-fence.XXXXXX")
    "$client" --init --put --commit --fence-collect --finalize > "$out" 2>&1 &
    pid=$!
    for _ in $(seq 1 1200); do
      grep -q 'STEP commit OK' "$out" && break
      sleep 0.05
    done
    sleep 0.5 # now in the fence, which cannot complete before rank 3 arrives
    kill -KILL "$pid"
    wait "$pid"
    code=$?
    touch "$marker"
    cat "$out"
    rm -f "$out"
    exit $code
    ;;
  3)
    for _ in $(seq 1 1200); do
      [ -e "$marker" ] && break
      sleep 0.05
    done
    rm -f "$marker"
    exec "$client" --init --put --commit --fence-collect --finalize
    ;;
  *) exec "$client" --init --put --commit --fence-collect --finalize ;;
esac
