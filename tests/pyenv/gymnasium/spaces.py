# SPDX-License-Identifier: MIT
"""The stub's spaces (tests/pyenv/gymnasium)."""
from cartpole import Box, Discrete  # noqa: F401
