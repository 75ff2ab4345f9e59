# SPDX-License-Identifier: MIT
"""The network of a matrix run across nodes, measured before its first job:
`gorila bench pingpong` between two of its nodes (simulated: two nodes of
a shaped network like the jobs'; real: the hostfile's first two hosts)
gives the latency and the bandwidth the cost model uses
(tools/compare/modelcheck.py)."""
import json
import os
import shlex
import subprocess

from .facts import GORILA, MPIRUN, SIMCLUSTER

BYTES = "8,1048576,16777216"


def probe_command(opts, hosts=None):
    """The command that measures the network, as a list."""
    bench = [GORILA, "bench", "pingpong", "--json", "--seconds", "0.5", "--bytes", BYTES]
    if opts.simcluster is not None:
        return [SIMCLUSTER, "shaped-run", "--link", opts.link, "--nodes", "2", "--slots", "1", "--", "bash", "-c",
                'exec mpirun -np 2 --hostfile "$SIMCLUSTER_HOSTFILE" $SIMCLUSTER_MPIRUN_ARGS --map-by node "$@"',
                "bash"] + bench
    # as scripts/launch does: no password prompt, a connect timeout
    return [MPIRUN, "-np", "2", "--host", ",".join("%s:1" % h for h in hosts[:2]), "--map-by", "node",
            "--mca", "plm_rsh_args", "-o BatchMode=yes -o ConnectTimeout=10"] + bench


def probe(opts, hosts=None, timeout=180):
    """{"latency_s", "bandwidth_bytes_per_s", "largest_bytes", "hosts",
    "command"} measured, or {"error": why, "command"}."""
    cmd = probe_command(opts, hosts)
    words = " ".join(shlex.quote(w) for w in cmd)
    if opts.hostfile is not None and (not hosts or len(hosts) < 2):
        return {"error": "the hostfile names one host: no link to measure", "command": words}
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, env=env,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": "the ping-pong did not finish: %s" % e, "command": words}
    fit, sizes = None, []
    for line in p.stdout.splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict) and isinstance(o.get("fit"), dict):
            fit = o
        elif isinstance(o, dict) and o.get("bytes"):
            sizes.append(o["bytes"])
    if p.returncode != 0 or fit is None:
        last = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["no output"])[-1]
        return {"error": "the ping-pong failed (exit %d): %s" % (p.returncode, last), "command": words}
    f = fit["fit"]
    return {"latency_s": f.get("latency_s"), "bandwidth_bytes_per_s": f.get("bandwidth_bytes_per_s"),
            "largest_bytes": max(sizes) if sizes else None, "hosts": fit.get("hosts"),
            "same_host": fit.get("same_host"), "command": "gorila bench pingpong --bytes %s between two %s" % (
                BYTES, "simulated nodes at %s" % opts.link if opts.simcluster is not None else "hosts")}
