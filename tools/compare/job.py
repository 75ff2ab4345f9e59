# SPDX-License-Identifier: MIT
"""The one job scripts/compare and scripts/seeds run at a time, and the
signals that stop it.

The job (scripts/launch, or `gorila train` for a local config) starts in a
process group of its own, so a Ctrl-C on the terminal, or a signal to the
tool's whole group (timeout(1) sends its SIGTERM that way), reaches only the
tool, which passes it on once: the job's first SIGINT/SIGTERM is its clean
stop with a final checkpoint, a second one its abort. The job also gets a
parent-death signal (prctl PR_SET_PDEATHSIG, SIGTERM): when the tool dies
without running a handler (SIGKILL, kill -9, an OOM kill), the kernel sends
the job SIGTERM and it stops cleanly by itself (scripts/launch then stops
mpirun, which carries its own parent-death signal, so no gorila rank is left
behind).

install_stop_handlers() turns SIGINT and SIGTERM to the tool into Stop (a
KeyboardInterrupt that knows its signal), except a signal ignored when the
tool started (nohup, a background job of a script), which stays ignored.
"""
import ctypes
import ctypes.util
import os
import signal
import subprocess

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stop(KeyboardInterrupt):
    """SIGINT or SIGTERM to the tool (signum); exit status 128 + signum."""

    def __init__(self, signum=signal.SIGINT):
        super().__init__(signum)
        self.signum = int(signum)

    @property
    def status(self):
        return 128 + self.signum


def signum_of(e):
    """The signal of a KeyboardInterrupt (a plain one: SIGINT)."""
    return e.signum if isinstance(e, Stop) else int(signal.SIGINT)


def _raise_stop(signum, frame):
    raise Stop(signum)


def install_stop_handlers():
    for s in STOP_SIGNALS:
        if signal.getsignal(s) != signal.SIG_IGN:
            signal.signal(s, _raise_stop)


def _libc_prctl():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


def _child_setup(parent, prctl):
    """Runs in the child between fork and exec: its own process group and
    SIGTERM when the tool dies. A tool that died before the prctl (the
    child was already handed to another parent) means no job: exit 143."""
    def setup():
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(143)
    return setup


def start(args, **kwargs):
    """subprocess.Popen(args, **kwargs) of a job as the module doc says."""
    return subprocess.Popen(args, preexec_fn=_child_setup(os.getpid(), _libc_prctl()), **kwargs)


def stop(p, signum):
    """Passes the tool's stop signal on to job p (its pid alone: the
    launcher's tee processes share its group and must outlive it)."""
    try:
        p.send_signal(signum)
    except OSError:
        pass
