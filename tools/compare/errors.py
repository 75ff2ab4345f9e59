# SPDX-License-Identifier: MIT
"""Errors and warnings of scripts/compare."""
import sys


class InputError(Exception):
    """Bad input: the message is printed after "compare: error: ", exit 2."""


def die(msg, status=2):
    print("compare: error: " + msg, file=sys.stderr)
    sys.exit(status)


def warn(msg):
    print("compare: warning: " + msg, file=sys.stderr)
