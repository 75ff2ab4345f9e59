#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/simcluster/xfer.py: timed TCP transfers between network namespaces,
for `scripts/simcluster linktest`.

    xfer.py SECONDS BPS FLOW...   one phase: these flows at once
    xfer.py --serve SECONDS BPS   phases read from stdin, one line each (its
                                  flows, separated by spaces), answered in
                                  turn (one interpreter start for them all)
    FLOW: SRC_PID,DST_PID,DST_ADDR

A flow is a TCP connection from the network namespace of process SRC_PID
to DST_ADDR in that of DST_PID (/proc/PID/ns/net): its listening socket is
made in the destination's namespace, its sending socket in the source's
(a socket belongs to the namespace its thread was in when it was made);
then one process per end runs every flow of the phase at once. Every flow
sends for SECONDS through a send buffer of 50 ms at BPS, the link's rate
in bits per second (64 KiB at least): a sender that waits for a core on a
busy machine still keeps its link busy, and little is left to drain when
it stops. A phase answers one line per flow, in the order given, and one
for all of them (or one line `error MESSAGE`):
    flow I BYTES BITS_PER_S
    total BYTES BITS_PER_S WINDOW_S
Rates are measured where the data arrives, with the kernel's arrival time
of each read (SO_TIMESTAMPNS: when the packet came in, not when the reader
got a core), over the window in which every flow was sending: from the
last flow's first byte plus a warm-up (TCP's slow start, the shaper's
initial burst) to the first flow's last byte, so flows that share a link
are compared while they compete. Each flow's bytes in the window are
interpolated from its arrival times. Exit status 2 on bad arguments, 1
when a phase failed.
"""
import array
import bisect
import ctypes
import os
import socket
import struct
import sys
import threading
import time

CHUNK = 1 << 18
WARMUP = 0.15
CLONE_NEWNET = 0x40000000
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux, SO_TIMESTAMPNS_OLD
TIMESPEC = struct.Struct("@qq")


class PhaseError(Exception):
    pass


def setns(fd):
    """Moves this thread into the network namespace open as fd."""
    if hasattr(os, "setns"):
        os.setns(fd, CLONE_NEWNET)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "setns: %s" % os.strerror(e))


def open_flow(src, dst, addr, sndbuf):
    """(sending socket, receiving socket) of one flow; src and dst are open
    namespaces."""
    setns(dst)
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind((addr, 0))
    lsock.listen(1)
    setns(src)
    out = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    out.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    out.settimeout(10)
    out.connect(lsock.getsockname())
    out.settimeout(None)
    conn, _ = lsock.accept()
    lsock.close()
    conn.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    return out, conn


def sender(sock, go, seconds):
    data = bytes(CHUNK)
    os.read(go, 1)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sock.sendall(data)
    sock.close()


def receiver(sock, out):
    """Reads to the end; writes (arrival time, bytes so far) pairs to fd out."""
    buf = bytearray(CHUNK)
    samples = array.array("d")
    total = 0
    anc = socket.CMSG_SPACE(TIMESPEC.size)
    while True:
        got, ancdata, _, _ = sock.recvmsg_into([buf], anc)
        if got == 0:
            break
        total += got
        t = None
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= TIMESPEC.size:
                sec, nsec = TIMESPEC.unpack_from(data)
                t = sec + nsec * 1e-9
        samples.append(t if t else time.time())
        samples.append(total)
    sock.close()
    with os.fdopen(out, "wb") as f:
        f.write(samples.tobytes())


def child(keep, socks, work, fds):
    """Run work in a child process that holds only socket keep (and closes
    the descriptors fds)."""
    pid = os.fork()
    if pid:
        return pid
    status = 1
    try:
        for pair in socks:
            for s in pair:
                if s is not keep:
                    s.close()
        for fd in fds:
            os.close(fd)
        work()
        status = 0
    except Exception as e:
        print("xfer: %s" % e, file=sys.stderr)
    finally:
        os._exit(status)


def at(times, counts, t):
    """Bytes received by time t (linear between arrivals)."""
    i = bisect.bisect_right(times, t)
    if i == 0:
        return 0.0
    if i == len(times):
        return float(counts[-1])
    t0, t1, n0, n1 = times[i - 1], times[i], counts[i - 1], counts[i]
    if t1 <= t0:
        return float(n1)
    return n0 + (n1 - n0) * (t - t0) / (t1 - t0)


def parse_flows(words):
    flows = [w.split(",") for w in words]
    if not flows or any(len(f) != 3 or not f[0].isdigit() or not f[1].isdigit() for f in flows):
        raise ValueError("flows are SRC_PID,DST_PID,DST_ADDR")
    return flows


def phase(seconds, sndbuf, flows):
    """Runs the flows at once; the lines of the answer."""
    # Every namespace is opened before this thread leaves its own (a pid
    # that is this process would otherwise name the namespace it is in).
    home = os.open("/proc/self/task/%d/ns/net" % threading.get_native_id(), os.O_RDONLY)
    nets = {}
    socks = []
    try:
        for src, dst, addr in flows:
            for pid in (src, dst):
                if pid not in nets:
                    try:
                        nets[pid] = os.open("/proc/%s/ns/net" % pid, os.O_RDONLY)
                    except OSError as e:
                        raise PhaseError("no network namespace of process %s: %s" % (pid, e.strerror))
        for src, dst, addr in flows:
            socks.append(open_flow(nets[src], nets[dst], addr, sndbuf))
    except OSError as e:
        for pair in socks:
            for s in pair:
                s.close()
        raise PhaseError("cannot open flow %d (%s): %s" % (len(socks) + 1, ",".join(flows[len(socks)]), e))
    finally:
        setns(home)
        os.close(home)
        for fd in nets.values():
            os.close(fd)
    # One process per end of every flow (threads of one would share the
    # interpreter's lock). The senders start together, when the last
    # process is there: at the end of file of the pipe go.
    go, go_w = os.pipe()
    pids = []
    pipes = []
    for out, conn in socks:
        r, w = os.pipe()
        pids.append(child(conn, socks, lambda c=conn, w=w: receiver(c, w), [go, go_w] + pipes))
        os.close(w)
        pipes.append(r)
    for out, conn in socks:
        pids.append(child(out, socks, lambda o=out: sender(o, go, seconds), [go_w] + pipes))
    for pair in socks:
        for s in pair:
            s.close()
    os.close(go_w)
    os.close(go)
    samples = []
    for r in pipes:
        with os.fdopen(r, "rb") as f:
            a = array.array("d")
            a.frombytes(f.read())
        samples.append((a[0::2].tolist(), a[1::2].tolist()))
    failed = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        failed += status != 0
    if failed:
        raise PhaseError("%d of the transfer processes failed" % failed)
    if any(not times for times, _ in samples):
        raise PhaseError("a flow received nothing")
    begin = max(times[0] for times, _ in samples) + WARMUP
    end = min(times[-1] for times, _ in samples)
    window = end - begin
    if window <= 0:
        raise PhaseError("the flows did not overlap long enough to measure")
    lines = []
    total = 0.0
    for i, (times, counts) in enumerate(samples):
        b = at(times, counts, end) - at(times, counts, begin)
        total += b
        lines.append("flow %d %d %.0f" % (i + 1, b, b * 8 / window))
    lines.append("total %d %.0f %.3f" % (total, total * 8 / window, window))
    return lines


def main(argv):
    serve = argv[:1] == ["--serve"]
    if serve:
        argv = argv[1:]
    try:
        seconds = float(argv[0])
        sndbuf = min(1 << 26, max(65536, int(float(argv[1]) / 8 * 0.05)))
        flows = None if serve else parse_flows(argv[2:])
        if seconds <= 0 or (serve and len(argv) != 2):
            raise ValueError
    except (ValueError, IndexError):
        print("usage: xfer.py SECONDS BPS SRC_PID,DST_PID,DST_ADDR... | xfer.py --serve SECONDS BPS",
              file=sys.stderr)
        return 2
    if not serve:
        try:
            print("\n".join(phase(seconds, sndbuf, flows)))
            return 0
        except PhaseError as e:
            print("xfer: %s" % e, file=sys.stderr)
            return 1
    status = 0
    for line in sys.stdin:
        try:
            answer = phase(seconds, sndbuf, parse_flows(line.split()))
        except (PhaseError, ValueError) as e:
            answer = ["error %s" % e]
            status = 1
        print("\n".join(answer), flush=True)
    return status


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (KeyboardInterrupt, BrokenPipeError):
        sys.exit(130)
