# SPDX-License-Identifier: MIT
"""scripts/compare's command line: main(argv)."""
import argparse
import sys

from . import job
from .errors import InputError, die
from .fromdirs import from_dirs
from .matrix import matrix

USAGE = """\
scripts/compare CONFIG [--modes ps_sync,ps_async,ps_bounded,allreduce,gossip,easgd,local_sgd] [--learners 1,2,4]
                [--param-servers 1,2,4] [--allreduce-impls ring,naive,mpi] [--learner-batch per_learner,global]
                [--seeds N] [--first-seed S]
                [--out DIR] [--set key=value]... [--resume] [--max-ranks N] [--jobs-timeout SEC]
                [--simcluster NODES [--link RATE] | --hostfile FILE] [--placement spread|pack]
scripts/compare --from RUN_DIR... [--out DIR]

Parameter servers against allreduce, and against the decentralized modes:
trains CONFIG once per sync mode x learner count x seed, one job after the
other through scripts/launch (never in parallel: the jobs are timed), and
writes DIR/report.md with tables per (mode, learner count) and PNG plots
(gnuplot) beside it. The report opens with "What this run shows": five
lessons of the communication model (a single PS's inbound N*K grows with
N, P shards divide it by P, the ring's bytes per worker approach 2K, the
naive driver's grow as (N-1)K, gossip's stay at 2K per exchange), each
supported (within 10% of the model) or not supported here, with why. A
matrix whose run.max_env_steps is not above replay.min_size is refused
(exit 2: its cells would stop before learning starts); cells that finish
without an update anyway are named at the report's top.
--modes: names of sync.mode (`gorila version --json` sync_modes);
default: every mode gorila lists, the decentralized gossip, easgd and
local_sgd included (name the modes to run fewer, e.g. --modes
ps_sync,ps_async,ps_bounded,allreduce for the centralized ones).
allreduce, gossip and local_sgd cells get roles.param_servers=0; the PS
cells (ps_sync, ps_async, ps_bounded and easgd, whose center variable lives
on the parameter servers) keep the config's parameter servers (1 when the
config has none), or run once per count of --param-servers
(roles.param_servers). allreduce and local_sgd cells run with the config's
sync.allreduce_impl, or once per algorithm of --allreduce-impls (names:
`gorila version --json` allreduce_impls). gossip and local_sgd average
among several learners, so gorila refuses them with 1 learner: those cells
are skipped, said once on the terminal and under the report's learning
table, and not counted as failed. allreduce cells run with the config's
learner.batch, or once per rule of --learner-batch: per_learner (Gorila's
weak scaling: each learner samples replay.batch_size rows, L batches
averaged) or global (Horovod's strong scaling: the L learners split one
replay.batch_size, the averaged gradient is the one-learner update; uniform
replay, a batch the learner counts divide, no sync.lr_scaling). The other
modes run per_learner; with 1 learner the rules are one update, so a
1-learner global cell is not run beside its per_learner cell (the report
shows that as the global series' 1-learner reference). A matrix with a
decentralized mode adds the report section "Consensus distance" (how far
the learners' copies drift apart, from each run's metrics.csv) and its plot
consensus.png. Run directories:
DIR/runs/<mode>[-<algorithm>][-global]-L<learners>[-P<param servers>]-s<seed>,
the algorithm, P and the global batch only when more than one is swept
(then the report's tables have them too); launcher logs: DIR/logs/.
A failed job (non-zero exit) is reported as failed with its exit status
and the matrix goes on. DIR must not exist, unless --resume: cells whose
run directory has a summary.json are kept, the others run again.
--from builds the report from finished run directories instead (same
environment; grouped by mode and learner count, and by parameter-server
count, allreduce algorithm and learner.batch where the runs differ in them).
--simcluster NODES [--link RATE]: run every job across NODES nodes
simulated on this machine behind NICs shaped to RATE each way (default
1gbit; scripts/simcluster shaped-run, docs/MULTIHOST.md); --hostfile FILE:
across real hosts (HOST slots=N lines, scripts/launch --hostfile). Placed
by scripts/launch --spread (each learner and each PS shard on a node of
its own while nodes last: every gradient crosses the network, as the cost
model assumes) unless --placement pack (the launcher's default: learners
with their PS shards). The report states the network, measures it first
(gorila bench pingpong between two nodes: latency and bandwidth) and sets
the cost model's prediction beside each cell's measurement (the
decentralized modes too, per local step), then projects it to many nodes.
--set key=value goes to every cell, except a sync key of some modes only
(sync.staleness: ps_bounded; sync.learner_pull_every: ps_async, ps_bounded;
sync.allreduce_impl: allreduce, local_sgd; sync.gossip_every and
sync.gossip_topology: gossip; sync.easgd_every and sync.easgd_alpha: easgd;
sync.average_every: local_sgd), which goes only to those modes' cells
(gorila refuses one set under another mode).
--max-ranks N (default 32): refuse layouts needing more MPI ranks.
--jobs-timeout SEC: stop a job after SEC seconds (cleanly, then by force)
and report it as timed out (exit 124).
Default DIR: runs/compare-<config name>-<date>-<time> (--from: runs/compare-from-...).
Each cell records its job's own exit status. SIGINT or SIGTERM to this
script (Ctrl-C, timeout(1), systemd, scancel) is passed on to the running
job, which stops cleanly with a final checkpoint (the same signal again:
it is killed); the cell is recorded as interrupted with the job's status
(unless it had ended by itself with 0), --resume runs it again, and the
report of the finished cells is written. The job runs in a process group
of its own and gets SIGTERM from the kernel when this script dies (kill
-9 too), so it never runs on unattended.
Exit status: 0 report written (even with failed cells), 2 bad input,
130 interrupted by SIGINT, 143 by SIGTERM (the report is written)."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        print(USAGE, file=sys.stderr)
        die(message)


def parser():
    p = Parser(prog="scripts/compare", add_help=False)
    p.add_argument("config", nargs="?")
    p.add_argument("--modes")  # default: every mode `gorila version --json` lists, the decentralized included
    p.add_argument("--learners", default="1,2,4")
    p.add_argument("--param-servers")  # default: the config's roles.param_servers
    p.add_argument("--allreduce-impls")  # default: the config's sync.allreduce_impl (allreduce, local_sgd)
    p.add_argument("--learner-batch")  # default: the config's learner.batch
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--out")
    p.add_argument("--set", action="append")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--max-ranks", type=int, default=32)
    p.add_argument("--jobs-timeout", type=float)
    p.add_argument("--simcluster", type=int)
    p.add_argument("--link")
    p.add_argument("--hostfile")
    p.add_argument("--placement")
    p.add_argument("--from", dest="from_dirs", nargs="+")
    p.add_argument("-h", "--help", action="store_true")
    return p


def main(argv):
    """argv as sys.argv; returns the exit status (bad input: exits 2)."""
    opts = parser().parse_args(argv[1:])
    if opts.help:
        print(USAGE)
        return 0
    job.install_stop_handlers()
    try:
        if opts.from_dirs:
            if opts.config:
                raise InputError("give either CONFIG or --from RUN_DIR..., not both")
            if opts.resume or opts.set:
                raise InputError("--from builds a report from finished runs: --resume and --set do not apply")
            if opts.param_servers is not None or opts.allreduce_impls is not None or opts.learner_batch is not None:
                raise InputError("--from reads each run's parameter servers, allreduce algorithm and learner.batch "
                                 "from the run: --param-servers, --allreduce-impls and --learner-batch do not apply")
            if opts.simcluster is not None or opts.link is not None or opts.hostfile or opts.placement:
                raise InputError("--from reads finished runs: --simcluster, --hostfile, --link and --placement do "
                                 "not apply")
            return from_dirs(opts, argv)
        if not opts.config:
            print(USAGE, file=sys.stderr)
            return 2
        return matrix(opts, argv)
    except InputError as e:
        die(str(e))
    except KeyboardInterrupt as e:  # before the matrix runs, or a second signal while the report is written
        print("compare: interrupted", file=sys.stderr)
        return job.signum_of(e) + 128
