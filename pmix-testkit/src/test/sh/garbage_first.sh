#!/bin/bash
# Rank 1 first connects to the PMIx server four times and sends what no PMIx peer would send
# instead of a handshake (text, 64 KiB of random bytes, a header announcing a 2 GiB message, and
# nothing at all), then runs the real client: the server must drop those connections and serve
# the job as if nothing had happened. Usage: garbage_first.sh CLIENT [ARGS...]
uri=$PMIX_SERVER_URI41
hp=${uri#*tcp4://}
host=${hp%:*}
port=${hp##*:}
if [ "$PMIX_RANK" = 1 ]; then
  exec 3<>"/dev/tcp/$host/$port" && printf 'GARBAGE-NOT-A-HANDSHAKE\n' >&3; exec 3>&-
  exec 3<>"/dev/tcp/$host/$port" && head -c 65536 /dev/urandom >&3; exec 3>&-
  exec 3<>"/dev/tcp/$host/$port" && printf '\xff\xff\xff\x7f\x01\x02\x03' >&3; exec 3>&-
  exec 3<>"/dev/tcp/$host/$port"; exec 3>&-
  echo "garbage sent to $host:$port" >&2
fi
exec "$@"
