"""scripts/compare as a package: parameter servers against allreduce.

Modules, from the bottom up:
  errors  InputError (bad input: exit 2), die, warn
  stats   quantiles, medians and how the report formats numbers
  facts   what gorila itself says: `gorila version --json` (sync modes,
          allreduce algorithms, roles, staleness bins) and `gorila config
          check --json` (the effective config and the rank count)
  dims    the dimensions beyond mode and learners (parameter servers,
          allreduce algorithm, learner.batch): group keys, their order
          and labels
  runs    one run's figures from its summary.json and eval.csv; Cell, one
          (mode, learners, [P or algorithm and batch rule,] seed) of the
          matrix
  plots   the gnuplot plots beside the report
  report  report.md
  matrix  running the cells one job at a time (and --resume)
  fromdirs  --from: the report from finished run directories
  cli     the command line: main()
"""
