# SPDX-License-Identifier: MIT
"""The MinAtar results' statistics (scripts/minatar-results): per-game
threshold from the tuning runs, and the training-return curves of gorila
runs and of the reference dqn.py, window by window."""
