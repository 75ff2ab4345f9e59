# SPDX-License-Identifier: MIT
"""Python tools that work with gorila's binary and run directories
(tools/compare: scripts/compare)."""
