# SPDX-License-Identifier: MIT
"""scripts/seeds: one run per seed of a config (or of several, side by
side) and their statistics. `stats` holds the statistics (standard library
only), `cli` the command line, the runs and the tables."""
