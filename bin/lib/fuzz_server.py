"""fuzz-server driver (run by bin/fuzz-server, whose header says what it checks, and pmix-testkit's
FuzzServerIT): one long-lived pmixrun server (soak.py's Driver: --tool-support, --report-state,
one job of agent ranks) whose ranks cycle libpmix 4.2.2 clients while this process opens
thousands of hostile connections to the same server; the server's fds, threads and live heap
are sampled (soak.py's idle_sample) between rounds and compared with the baseline."""
import argparse, os, random, select, socket, statistics, struct, sys, threading, time

import soak
from soak import Driver, MIB, check_state, fmt, idle_sample, log

# The hostile connection classes and their shares of the connections.
CLASSES = {
    "random": 3,      # random bytes (1..4096), then closed by us or held
    "prefix": 3,      # a valid client or tool request cut anywhere, then random garbage
    "mutated": 3,     # a valid client or tool request with 1..8 bytes changed
    "length": 2,      # a connect header whose nbytes is absurd (0, 1, > 128 KiB .. 2^32-1, BE)
    "half": 1,        # a valid request cut short, then silence
    "idle": 1,        # nothing at all
    "flood": 6,       # connect and close at once (FIN or RST), maybe after a few bytes
    "auth": 2,        # a real tool handshake (flag 3), then frames with garbage payloads
}
# Commands a garbage frame of an authenticated tool never starts with: those that would act on
# the job if the garbage happened to decode (ABORT 1, SPAWNNB 9, NOTIFY 12, JOB_CONTROL 18,
# IOF_PUSH 23) or leave data in the store the heap check would count (PUBLISHNB 6). Everything
# else, 0..255, is fair.
UNSAFE_COMMANDS = {1, 6, 9, 12, 18, 23}
TOOL_REPLY = 4 + 256 + 4 + 256 + 4 + 4  # flag 3: status, nspace, rank, server nspace/rank, valid
FUZZ_NSPACE = "fuzz-unregistered@7"  # never registered: a mutated client request stays refused


def parse():
    p = argparse.ArgumentParser(prog="fuzz-server")
    p.add_argument("--connections", type=int, default=100000, help="hostile connections in all")
    p.add_argument("--rounds", type=int, default=10, help="rounds; a sample after each")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--workers", type=int, default=16, help="threads opening connections")
    p.add_argument("--idle", type=int, default=5000,
                   help="held connections (idle, half, garbage awaiting the server's close) at "
                        "once, while the job works; above the pending cap, so that the server "
                        "keeps replacing the oldest silent ones while the job's own connections "
                        "still get in")
    p.add_argument("--storm", type=int, default=6000,
                   help="idle connections opened at once at the start of every round, more than "
                        "the pending cap: the job's clients connect while it is overfull")
    p.add_argument("--cycles", type=int, default=25,
                   help="C client cycles per rank per segment; segments repeat while fuzzing")
    p.add_argument("--handshake-timeout", type=int, default=10,
                   help="pmixrun --handshake-timeout (the server's default: 10)")
    p.add_argument("--max-pending", type=int, default=4096,
                   help="pmixrun --max-pending-handshakes (the server's default: 4096)")
    p.add_argument("--over-cap", type=int, default=200,
                   help="the cap phase opens max-pending + this many idle connections")
    p.add_argument("--slack", type=float, default=5.0,
                   help="seconds past the handshake timeout a stalled connection may stay open")
    p.add_argument("--heap-tolerance", type=float, default=1.0,
                   help="MiB the live heap (after a full GC) of a sample may exceed the baseline")
    p.add_argument("--rss-tolerance", type=float, default=8.0,
                   help="MiB the RSS outside the Java heap may grow from the middle sample to "
                        "the end")
    p.add_argument("--settle", type=float, default=10.0,
                   help="seconds an idle sample waits for fds and threads to return")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--quick", action="store_true",
                   help="2,000 connections in 2 rounds (+ a storm of 800 each), 800 held, "
                        "handshake timeout 3 s, cap 600 (+100), 10 cycles per segment")
    # (-XX:MarkSweepDeadRatio=0 is among soak.py's Driver's own options of the server JVM)
    p.add_argument("--server-java-opts", default="",
                   help="more JVM options for the server (e.g. -XX:NativeMemoryTracking=summary: "
                        "then each sample's histogram file also holds VM.native_memory summary, "
                        "and histograms/LABEL.smaps the server's /proc/PID/smaps)")
    soak.driver_arguments(p, "pmix_client_check")
    a = p.parse_args()
    if a.quick:
        a.connections, a.rounds, a.idle, a.cycles, a.storm = 2000, 2, 800, 10, 800
        a.handshake_timeout, a.max_pending, a.over_cap = 3, 600, 100
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 31)
    a.dump_over = 0
    a.pmixrun_args = ["--handshake-timeout", str(a.handshake_timeout),
                      "--max-pending-handshakes", str(a.max_pending)]
    return a


# ---- what the connections send ----

def cstr(s):
    return s.encode() + b"\0"


def credential():
    """The native credential over TCP: euid, egid in host order (little-endian)."""
    return struct.pack("<II", os.geteuid(), os.getegid())


def client_payload(nspace, rank):
    """A 4.2.2 client's connect request payload (flag 0, with its pad byte)."""
    return (cstr("native") + struct.pack(">I", 8) + credential() + b"\0" + cstr(nspace)
            + struct.pack(">I", rank) + cstr("4.2.2") + cstr("v41") + b"\x01" + cstr("hash")
            + b"\0")


def tool_payload(flag=3):
    """A tool's connect request payload: flag 3 (needs an id) or 4 (gives FUZZ_NSPACE.0)."""
    body = cstr("native") + struct.pack(">I", 8) + credential() + bytes([flag])
    body += struct.pack(">II", os.geteuid(), os.getegid())
    if flag == 4:
        body += cstr(FUZZ_NSPACE.replace("@", "-tool@")) + struct.pack(">I", 0)
    return body + cstr("4.2.2") + cstr("v41") + b"\x01" + cstr("hash")


def connect_request(payload, nbytes=None):
    n = len(payload) if nbytes is None else nbytes
    return b"\xff" * 8 + struct.pack("<I", n) + b"\0" * 4 + payload


def valid_request(r):
    if r.random() < 0.5:
        return connect_request(client_payload(FUZZ_NSPACE, r.randrange(1 << 16)))
    return connect_request(tool_payload(r.choice((3, 4))))


def frame(tag, payload, nbytes=None):
    n = len(payload) if nbytes is None else nbytes
    return struct.pack(">iIII", 0, tag, n, 0) + payload


def garbage_payload(r):
    """A command byte that cannot act on the job, then random bytes or absurd lengths."""
    cmd = r.choice([c for c in range(256) if c not in UNSAFE_COMMANDS])
    if r.random() < 0.5:
        rest = r.randbytes(r.randrange(0, 512))
    else:
        # lengths a decoder must refuse: INT32 string lengths, varint sizes up to 2^64-1
        pieces = [struct.pack(">i", r.choice((0x7FFFFFFF, -1, -2 ** 31, 1 << 20))),
                  b"\xff" * 9 + b"\x01", b"\xff\xff\xff\xff\x0f", b"\x80" * 10,
                  struct.pack(">I", 0xFFFFFFFF)]
        rest = b"".join(r.choice(pieces) for _ in range(r.randrange(1, 6)))
        rest += r.randbytes(r.randrange(0, 32))
    return bytes([cmd]) + rest


# ---- the connections ----

class Stats:
    """Outcomes per class: closed by the server (with the seconds from connect), answered (the
    server sent bytes), closed by us, left open past the bound, failed to connect."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by = {}

    def add(self, cls, outcome, secs=None):
        with self.lock:
            d = self.by.setdefault(cls, {"n": 0, "times": []})
            d["n"] += 1
            d[outcome] = d.get(outcome, 0) + 1
            if secs is not None and outcome == "server-closed":
                d["times"].append(secs)

    def get(self, cls, outcome):
        with self.lock:
            return self.by.get(cls, {}).get(outcome, 0)


class Holder(threading.Thread):
    """Holds connections until the server closes them (end of stream or reset) or sends
    something; one that is still open `bound` seconds after its connect is counted "left-open"
    and closed by us."""

    def __init__(self, stats, bound):
        super().__init__(daemon=True)
        self.stats = stats
        self.bound = bound
        self.ep = select.epoll()
        self.lock = threading.Lock()
        self.info = {}
        self.stop = threading.Event()
        self.slots = None  # the workers' semaphore, released for each connection they handed in

    def hold(self, sock, cls, t0, slot):
        with self.lock:
            self.info[sock.fileno()] = (sock, cls, t0, slot)
            self.ep.register(sock.fileno(), select.EPOLLIN | select.EPOLLRDHUP)

    def count(self):
        with self.lock:
            return len(self.info)

    def _finish(self, fd, outcome, now):
        with self.lock:
            entry = self.info.pop(fd, None)
            if entry is None:
                return
            self.ep.unregister(fd)
        sock, cls, t0, slot = entry
        sock.close()
        self.stats.add(cls, outcome, now - t0)
        if slot and self.slots is not None:
            self.slots.release()

    def run(self):
        last_scan = time.monotonic()
        while not self.stop.is_set():
            events = self.ep.poll(0.2)
            now = time.monotonic()
            for fd, _ in events:
                with self.lock:
                    entry = self.info.get(fd)
                if entry is None:
                    continue
                try:
                    data = entry[0].recv(65536)
                except (ConnectionResetError, BrokenPipeError):
                    data = b""
                except BlockingIOError:
                    continue
                self._finish(fd, "server-closed" if not data else "answered", now)
            if now - last_scan > 0.5:
                last_scan = now
                with self.lock:
                    old = [fd for fd, e in self.info.items() if now - e[2] > self.bound]
                for fd in old:
                    self._finish(fd, "left-open", now)

    def drain(self, limit):
        deadline = time.monotonic() + limit
        while self.count() and time.monotonic() < deadline:
            time.sleep(0.1)
        return self.count()


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            break
        buf += b
    return buf


class Fuzzer:
    def __init__(self, a, addr, stats, holder):
        self.a = a
        self.addr = addr
        self.stats = stats
        self.holder = holder
        self.slots = threading.Semaphore(a.idle)
        holder.slots = self.slots
        names = list(CLASSES)
        weights = [CLASSES[c] for c in names]
        plan_rng = random.Random(a.seed)
        self.plan = plan_rng.choices(names, weights, k=a.connections)
        self.warm_plan = names * 40  # the warm-up: every class, 40 times

    def run(self, plan, first, count, label):
        """Connections plan[first:first+count] on --workers threads."""
        nxt = [first]
        lock = threading.Lock()
        end = first + count

        def work():
            while True:
                with lock:
                    i = nxt[0]
                    if i >= end:
                        return
                    nxt[0] += 1
                self.one(label, i, plan[i])

        ts = [threading.Thread(target=work, daemon=True) for _ in range(self.a.workers)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    def one(self, label, i, cls):
        # One generator per connection: the bytes of connection i depend on the seed alone.
        r = random.Random(f"{self.a.seed}-{label}-{i}")
        held = cls in ("half", "idle") or (cls in ("random", "prefix", "mutated", "length")
                                           and r.random() < 0.7)
        if held:
            self.slots.acquire()
        t0 = time.monotonic()
        try:
            s = socket.create_connection(self.addr, timeout=10)
        except OSError as e:
            self.stats.add(cls, f"connect-failed ({e.__class__.__name__})")
            if held:
                self.slots.release()
            return
        try:
            if cls == "auth":
                self.auth(s, r)
                return
            data = self.bytes_of(cls, r)
            if cls == "flood":
                if data:
                    s.sendall(data)
                if r.random() < 0.5:  # a reset instead of a FIN
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
                self.stats.add(cls, "closed-by-us")
                return
            if data:
                s.sendall(data)
            if held:
                s.setblocking(False)
                self.holder.hold(s, cls, t0, True)
                s = None
            else:
                s.close()
                self.stats.add(cls, "closed-by-us")
        except OSError:
            # the server closed or reset while we were still writing: its verdict came early
            self.stats.add(cls, "server-closed", time.monotonic() - t0)
            if held:
                self.slots.release()
            if s is not None:
                s.close()

    def bytes_of(self, cls, r):
        if cls == "random":
            return r.randbytes(r.randrange(1, 4097))
        if cls == "prefix":
            v = valid_request(r)
            return v[:r.randrange(16, len(v) + 1)] + r.randbytes(r.randrange(1, 2049))
        if cls == "mutated":
            v = bytearray(valid_request(r))
            for _ in range(r.randrange(1, 9)):
                v[r.randrange(len(v))] = r.randrange(256)
            return bytes(v)
        if cls == "length":
            p = tool_payload() if r.random() < 0.5 else client_payload(FUZZ_NSPACE, 0)
            choice = r.randrange(6)
            if choice == 0:  # the length big-endian, as a mistaken C connector would
                head = b"\xff" * 8 + struct.pack(">I", len(p)) + b"\0" * 4
            else:
                n = (0xFFFFFFFF, 0x80000000, 131073, r.randrange(131073, 1 << 32), 0)[choice - 1]
                head = b"\xff" * 8 + struct.pack("<I", n) + b"\0" * 4
            return head + p[:r.randrange(0, len(p) + 1)]
        if cls == "half":
            v = valid_request(r)
            return v[:r.randrange(1, len(v))]
        if cls == "idle":
            return b""
        if cls == "flood":
            return r.randbytes(r.randrange(1, 64)) if r.random() < 0.2 else b""
        raise ValueError(cls)

    def auth(self, s, r):
        """A tool handshake the server accepts (this uid, --tool-support), then 1..4 frames:
        garbage payloads behind a valid header (a safe command byte), headers announcing up to
        2^32-1 bytes, a large announced frame left unfinished, raw garbage; then whatever the
        server says within 0.3 s, and we close."""
        s.sendall(connect_request(tool_payload(3)))
        reply = recv_exact(s, TOOL_REPLY)
        if len(reply) < TOOL_REPLY:
            self.stats.add("auth", "refused")
            s.close()
            return
        status = struct.unpack(">i", reply[:4])[0]
        valid = struct.unpack(">i", reply[-4:])[0]
        if status != 0 or valid != 0:
            self.stats.add("auth", "refused")
            s.close()
            return
        out = b""
        for _ in range(r.randrange(1, 5)):
            tag = r.choice((0, 1, 2, 100 + r.randrange(1000), r.randrange(1 << 32)))
            kind = r.randrange(10)
            if kind < 6:
                out += frame(tag, garbage_payload(r))
            elif kind == 6:
                out += frame(tag, b"", r.choice((0xFFFFFFFF, 0x80000000, 64 * MIB + 1)))
                break
            elif kind == 7:
                out += frame(tag, r.randbytes(65536), r.randrange(MIB, 16 * MIB))
                break
            else:
                out += r.randbytes(r.randrange(1, 512))
        try:
            s.sendall(out)
            s.settimeout(0.3)
            got = b""
            while True:
                b = s.recv(65536)
                if not b:
                    self.stats.add("auth", "server-closed")
                    break
                got += b
        except socket.timeout:
            self.stats.add("auth", "answered" if got else "silent")
        except OSError:
            self.stats.add("auth", "server-closed")
        s.close()


# ---- the job's clients, cycling while the fuzzer works ----

class Cycler(threading.Thread):
    """Segments of --cycles C client cycles per rank (soak.py's segment "c") one after the other
    until stopped; counts the cycles that succeeded and keeps the first failure."""

    def __init__(self, d, a, name):
        super().__init__(daemon=True)
        self.d, self.a, self.name = d, a, name
        self.stop = threading.Event()
        self.ok_cycles = 0
        self.segments = 0
        self.failure = None

    def run(self):
        k = 0
        while not self.stop.is_set() and self.failure is None:
            ok, why = self.d.segment("c", f"{self.name}-{k}", self.a.cycles)
            k += 1
            self.segments += 1
            if ok:
                self.ok_cycles += self.a.cycles * self.a.ranks
                for r in range(self.a.ranks):  # only a failed segment's output is kept
                    try:
                        os.remove(os.path.join(self.a.out, f"c-{self.name}-{k - 1}.rank{r}.txt"))
                    except OSError:
                        pass
            else:
                self.failure = f"segment {self.name}-{k - 1}: {why}"


def storm(a, addr, holder, stats):
    """--storm idle connections at once, held until the server closes them: beyond the cap the
    oldest are replaced at once, the rest go at the timeout; meanwhile the job's clients keep
    connecting (each replaces the oldest silent one). Not counted in the rounds' connections."""
    n = 0
    for _ in range(a.storm):
        try:
            s = socket.create_connection(addr, timeout=10)
        except OSError as e:
            stats.add("storm", f"connect-failed ({e.__class__.__name__})")
            continue
        s.setblocking(False)
        holder.hold(s, "storm", time.monotonic(), False)
        n += 1
    return n


def server_address(tmp, pid):
    """The server's address from its rendezvous file pmix.<host>.tool.<pid> (under TMPDIR)."""
    for root, _, files in os.walk(tmp):
        for f in files:
            if f.startswith("pmix.") and f.endswith(f".tool.{pid}"):
                with open(os.path.join(root, f)) as fh:
                    uri = fh.readline().strip()
                hostport = uri.split("tcp4://", 1)[1]
                host, port = hostport.rsplit(":", 1)
                return host, int(port)
    raise RuntimeError(f"no rendezvous file pmix.*.tool.{pid} under {tmp}")


def compare(base, s, a):
    """fds and threads must equal the baseline at every sample; the live heap may move with the
    collector's sawtooth (JNA's Memory objects awaiting their cleaner, Netty's buffer caches;
    without -XX:MarkSweepDeadRatio=0 also Serial's dead wood: +1.4 MiB and back) but never beyond
    4 x --heap-tolerance (the trend: heap_trend)."""
    problems = []
    if s["fds"] != base["fds"]:
        problems.append(f"fds {s['fds']} (baseline {base['fds']})")
    if s["threads"] != base["threads"]:
        problems.append(f"threads {s['threads']} (baseline {base['threads']})")
    if s["heap"] < 0:
        problems.append("heap not measured (jcmd failed)")
    elif s["heap"] - base["heap"] > 4 * a.heap_tolerance * MIB:
        problems.append(f"live heap {(s['heap'] - base['heap']) / 1024:.0f} KiB over the "
                        f"baseline")
    return problems


def heap_trend(rows, a):
    """soak.py's rule: the lowest live heap of the second half's samples at most --heap-tolerance
    above the lowest of the first half's (baseline included). A leak raises the floor; the
    sawtooth does not."""
    heaps = [s["heap"] for _, _, s in rows]
    if len(heaps) < 2 or min(heaps) < 0:
        return []
    half = (len(heaps) + 1) // 2
    first, second = heaps[:half], heaps[half:]
    grew = min(second) - min(first)
    if grew > a.heap_tolerance * MIB:
        return [f"live heap floor grew {grew / 1024:.0f} KiB from the first half's samples to "
                f"the second half's"]
    return []


def main():
    a = parse()
    os.makedirs(a.out, exist_ok=True)
    log(f"fuzz-server: seed {a.seed}; {a.connections} hostile connections in {a.rounds} rounds "
        f"({a.workers} threads, at most {a.idle} held at once) while {a.ranks} ranks cycle "
        f"libpmix 4.2.2 clients ({a.cycles} cycles per rank per segment); server: handshake "
        f"timeout {a.handshake_timeout} s, at most {a.max_pending} pending handshakes; cap "
        f"phase {a.max_pending} + {a.over_cap}; files in {a.out}")
    d = Driver(a)
    stats = Stats()
    failures = []
    rows = []
    peaks = {}
    warm = 0
    holder = Holder(stats, a.handshake_timeout + a.slack)
    try:
        pid = d.start()
        addr = server_address(d.tmp, pid)
        log(f"fuzz-server: server pid {pid} at {addr[0]}:{addr[1]} (pmixrun --tool-support, "
            f"namespace {d.nspace})")
        holder.start()
        fz = Fuzzer(a, addr, stats, holder)
        # warm-up: the classes' code paths and one segment of cycles, then the baseline
        ok, why = d.segment("c", "warmup", 2)
        if not ok:
            raise RuntimeError(f"warm-up cycles failed: {why}")
        fz.run(fz.warm_plan, 0, len(fz.warm_plan), "warmup")
        if holder.drain(a.handshake_timeout + a.slack + 5):
            raise RuntimeError("warm-up connections not closed")
        with stats.lock:
            warm = sum(v["n"] for v in stats.by.values())
            stats.by.clear()  # the tables count the measured rounds only
        idle_sample(a, pid, None, "warmup")
        base = idle_sample(a, pid, None, "baseline")
        rows.append(("baseline", 0, base))
        log(f"  baseline: {fmt(base)}  (rss, outside heap, heap MiB, threads, jdk, fds)")
        per = [a.connections // a.rounds + (1 if i < a.connections % a.rounds else 0)
               for i in range(a.rounds)]
        done = 0
        t_all = time.monotonic()
        cycles_ok = 0
        for rnd, n in enumerate(per):
            cyc = Cycler(d, a, f"r{rnd}")
            cyc.start()
            t0 = time.monotonic()
            stopper = threading.Event()

            def peak_watch():
                while not stopper.wait(1.0):
                    d.note_peak("fuzz")
            pw = threading.Thread(target=peak_watch, daemon=True)
            pw.start()
            stormed = storm(a, addr, holder, stats)
            fz.run(fz.plan, done, n, "main")
            left = holder.drain(a.handshake_timeout + a.slack + 5)
            cyc.stop.set()
            cyc.join(timeout=120 + a.cycles * 2)
            stopper.set()
            pw.join()
            done += n
            if cyc.is_alive():
                failures.append(f"round {rnd}: the cyclers did not finish")
                break
            cycles_ok += cyc.ok_cycles
            if cyc.failure:
                failures.append(f"round {rnd}: job client failed: {cyc.failure}")
            if left:
                failures.append(f"round {rnd}: {left} held connections still open")
            if d.proc.poll() is not None:
                failures.append(f"round {rnd}: the server ended (status {d.proc.returncode})")
                break
            s = idle_sample(a, pid, base, f"round{rnd}")
            rows.append((f"round {rnd}", done, s))
            probs = compare(base, s, a)
            failures += [f"round {rnd}: {p}" for p in probs]
            log(f"  round {rnd}: {done:>7}/{a.connections} connections (+ a storm of {stormed} "
                f"idle), {cyc.ok_cycles} client "
                f"cycles OK in {cyc.segments} segments, {time.monotonic() - t0:.0f} s  "
                f"{fmt(s)}{'  ' + '; '.join(probs) if probs else ''}")
        wall = time.monotonic() - t_all
        peaks = dict(d.peak.get("fuzz", {}))

        # the cap phase: nothing else connected; max-pending + over-cap idle connections
        cap_early = cap_late = cap_other = 0
        if d.proc.poll() is None:
            cap = Stats()
            capholder = Holder(cap, a.handshake_timeout + a.slack)
            capholder.start()
            t0 = time.monotonic()
            opened = 0
            for _ in range(a.max_pending + a.over_cap):
                try:
                    s = socket.create_connection(addr, timeout=10)
                except OSError:
                    cap.add("cap", "connect-failed")
                    continue
                s.setblocking(False)
                capholder.hold(s, "cap", time.monotonic(), False)
                opened += 1
            t_open = time.monotonic() - t0
            # a real tool handshake while the cap is full: it replaces the oldest idle one
            try:
                ts = socket.create_connection(addr, timeout=10)
                ts.sendall(connect_request(tool_payload(3)))
                got = recv_exact(ts, TOOL_REPLY)
                ts.close()
                during = ("accepted" if len(got) == TOOL_REPLY and got[:4] == b"\0" * 4
                          else f"closed after {len(got)} reply bytes")
            except (ConnectionResetError, BrokenPipeError):
                during = "closed by the server without a reply"
            except OSError as e:
                during = f"failed ({e!r})"
            capholder.drain(a.handshake_timeout + a.slack + 5)
            capholder.stop.set()
            times = cap.by.get("cap", {}).get("times", [])
            cap_early = sum(1 for t in times if t < a.handshake_timeout / 2)
            cap_late = sum(1 for t in times if t >= a.handshake_timeout / 2)
            cap_other = opened - len(times)
            log(f"  cap phase: {opened} idle connections opened in {t_open:.1f} s: {cap_early} "
                f"closed at once (< {a.handshake_timeout / 2:.1f} s), {cap_late} closed by the "
                f"handshake timeout (max {max(times, default=0):.1f} s), {cap_other} otherwise; "
                f"a tool handshake meanwhile: {during}")
            # the tool took the place of one more idle connection
            if cap_early != a.over_cap + 1 or cap_late != a.max_pending - 1 or cap_other:
                failures.append(f"cap phase: {cap_early} closed at once (want {a.over_cap + 1}),"
                                f" {cap_late} by the timeout (want {a.max_pending - 1}), "
                                f"{cap_other} neither")
            if during != "accepted":
                failures.append(f"cap phase: a tool handshake while the cap was full: {during}")
            ok, why = d.segment("c", "after-cap", a.cycles)
            if not ok:
                failures.append(f"cycles after the cap phase: {why}")
            s = idle_sample(a, pid, base, "end")
            rows.append(("end", done, s))
            failures += [f"end: {p}" for p in compare(base, s, a)]
        failures += heap_trend(rows, a)
        # soak's rule for native memory: RSS outside the heap from the middle sample to the end
        mid, last = rows[len(rows) // 2][2], rows[-1][2]
        if min(mid["nonheap"], last["nonheap"]) >= 0 \
                and last["nonheap"] - mid["nonheap"] > a.rss_tolerance * MIB:
            failures.append(f"RSS outside the heap grew {(last['nonheap'] - mid['nonheap']) / MIB:.1f}"
                            f" MiB from the middle sample to the end")
        holder.stop.set()
        rc = d.finish()
        if rc != 0:
            failures.append(f"pmixrun ended with status {rc} (see {d.log.name})")
        for p in check_state(d.state, a.ranks, True):
            failures.append(f"state report: {p}")
    except Exception as e:  # noqa: BLE001 - reported, and the server is stopped
        failures.append(f"driver: {e!r}")
        wall, cycles_ok = 0, 0
    finally:
        holder.stop.set()
        d.kill()

    bound = a.handshake_timeout + a.slack
    log()
    log(f"summary (seed {a.seed}; server = pmixrun's JVM; handshake timeout "
        f"{a.handshake_timeout} s, pending cap {a.max_pending}):")
    log(f"  {'class':<9}{'conns':>8}{'srv-closed':>11}{'answered':>9}{'us':>8}{'silent':>7}"
        f"{'refused':>8}{'open>' + str(int(bound)) + 's':>9}{'failed':>7}   server close s "
        f"(min/median/max)")
    total = 0
    for cls in [*CLASSES, "storm"]:
        st = stats.by.get(cls)
        if not st:
            continue
        total += st["n"] if cls != "storm" else 0
        t = st["times"]
        ts = (f"{min(t):.2f}/{statistics.median(t):.2f}/{max(t):.2f}" if t else "-")
        failed = sum(v for k, v in st.items() if k.startswith("connect-failed"))
        log(f"  {cls:<9}{st['n']:>8}{st.get('server-closed', 0):>11}{st.get('answered', 0):>9}"
            f"{st.get('closed-by-us', 0):>8}{st.get('silent', 0):>7}{st.get('refused', 0):>8}"
            f"{st.get('left-open', 0):>9}{failed:>7}   {ts}")
        if st.get("left-open"):
            failures.append(f"{cls}: {st['left-open']} connections open past {bound:.0f} s")
        if failed:
            failures.append(f"{cls}: {failed} connects failed")
    if stats.get("auth", "refused"):
        failures.append(f"auth: {stats.get('auth', 'refused')} tool handshakes refused")
    for cls in ("half", "idle", "storm"):
        st = stats.by.get(cls, {})
        if st.get("answered"):
            failures.append(f"{cls}: the server answered {st['answered']} incomplete requests")
    st = stats.by.get("length", {})
    if st.get("times") and max(st["times"]) >= a.handshake_timeout:
        # 0 or more than 128 KiB announced, or a BE length (which reads as more): refused from
        # the header, never left to the timer
        failures.append(f"length: a connection closed only after {max(st['times']):.1f} s")
    log(f"  {total} connections (+{warm} warm-up, +{a.rounds} x {a.storm} storm) in {wall:.0f} s; {cycles_ok} job "
        f"client cycles (init/put/commit/fence/get/finalize) succeeded meanwhile")
    log(f"  {'sample':<10}{'conns':>8}{'RSS MiB':>9}{'non-heap':>9}{'heap MiB':>10}{'threads':>9}"
        f"{'jdk':>5}{'fds':>6}")
    for label, n, s in rows:
        log(f"  {label:<10}{n:>8}{fmt(s)}")
    if peaks:
        log(f"  {'peak':<10}{'(busy)':>8}{peaks['rss'] / MIB:>9.1f}{'':>19}{peaks['threads']:>9}"
            f"{peaks['jvmdyn']:>5}{peaks['fds']:>6}")
    if failures:
        log("fuzz-server: FAILED:")
        for f in failures:
            log(f"  {f}")
        return 1
    log("fuzz-server: the server stayed up, every job client cycle succeeded, every held "
        "connection was closed by the server within the bound, the pending cap held exactly and "
        "let a real tool in, "
        "fds/threads/heap back to the baseline, state report counters exact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
