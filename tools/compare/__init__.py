# SPDX-License-Identifier: MIT
"""scripts/compare as a package: parameter servers against allreduce and
the decentralized modes (gossip, local_sgd, easgd).

Modules, from the bottom up:
  errors  InputError (bad input: exit 2), die, warn
  stats   quantiles, medians and how the report formats numbers
  facts   what gorila itself says: `gorila version --json` (sync modes,
          allreduce algorithms, roles, staleness bins), `gorila config
          check --json` (the effective config and the rank count), and
          what each mode asks of its layout (parameter servers, an
          allreduce algorithm, several learners)
  dims    the dimensions beyond mode and learners (parameter servers,
          allreduce algorithm, learner.batch): group keys, their order
          and labels
  runs    one run's figures from its summary.json, eval.csv and
          metrics.csv (consensus distance); Cell, one
          (mode, learners, [P or algorithm and batch rule,] seed) of the
          matrix
  plots   the gnuplot plots beside the report
  lessons  report.md's "What this run shows": five lessons of the cost
          model, each supported or not by the runs' measurements
  report  report.md (with "Consensus distance" for decentralized cells)
  costmodel, modelcheck, network  the cost model, its sections beside a
          measured network, and the measurement
  budget  refusing a matrix whose cells would stop before learning starts
  matrix  running the cells one job at a time (and --resume)
  fromdirs  --from: the report from finished run directories
  cli     the command line: main()
"""
