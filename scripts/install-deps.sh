#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install everything gorila needs on Debian 12 (run as root; idempotent).
# Packages already present are left alone; apt-get update runs once.
set -euo pipefail
pkgs=(
    build-essential pkg-config         # gcc, make
    libopenmpi-dev openmpi-bin         # MPI
    libopenblas-dev                    # BLAS (cblas_sgemm)
    libyaml-dev                        # config loader
    python3.11-dev                     # the Python bridge (src/pyenv: libpython3.11; make PYTHON=0 without)
    libcriterion-dev                   # unit tests
    clang libclang-rt-14-dev           # libFuzzer target for the config loader
    gnuplot-nox                        # plots of run metrics
    python3                            # scripts/compare (table and plots)
    python3-numpy python3-torch        # PyTorch cross-checks: exported conv networks (tests/cli/export_conv.sh),
                                       # scripts/torch_reference.py, bench_torch_minatar.py, minatar_reference.py
    flake8 shellcheck                  # lint of the scripts (tests/cli/lint.sh)
    protobuf-compiler python3-protobuf # the TensorBoard event-file reader of the tests (tests/tb)
    procps                             # ps, for CPU-time checks in the MPI tests
    iproute2 util-linux                # ip, tc, unshare, nsenter: scripts/simcluster's shaped network
    munge slurm-client                 # Slurm: munged, sbatch, scontrol (scripts/slurm/, tests/mpi/slurm.sh)
    slurmctld slurmd                   # its daemons, which tests/mpi/slurm.sh starts in a temporary directory
)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#pkgs[@]} packages already installed"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}; run this script as root (or with sudo)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
