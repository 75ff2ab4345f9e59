# SPDX-License-Identifier: MIT
# scripts/slurm/chain.sh: the resume chain of scripts/slurm/gorila.sbatch and
# gorila-srun.sbatch (sourced by them; docs/MULTIHOST.md, "On a Slurm
# cluster"). A job that ends at its time limit has stopped cleanly with a
# final checkpoint (stop_reason "signal" in summary.json, exit 0); with
# GORILA_CHAIN=N in the environment of sbatch it then submits the next job
# of the chain itself: the same batch script, `--resume RUN_DIR`, as many
# nodes, tasks, CPUs per task and the same time limit, to start when this
# one has ended (--dependency=afterany), with GORILA_CHAIN=N-1 (and the
# sbatch options of GORILA_CHAIN_OPTS, words: `-o runs/chain-%j.out`). A job that
# finished (budget, solved, time) or failed ends the chain. Stop a chain:
# scancel its pending job.

# chain_run_dir LOG: the run directory gorila named in LOG ("run directory: X").
chain_run_dir() { sed -n 's/^run directory: //p' "$1" 2>/dev/null | head -1; }

# chain_next NAME SCRIPT RC RUN_DIR: submit the next job when this one
# (status RC, run directory RUN_DIR) stopped by a signal and GORILA_CHAIN > 0.
chain_next() {
    local name=$1 script=$2 rc=$3 run=$4 left=${GORILA_CHAIN:-0} why limit next opts
    [[ $left =~ ^[0-9]+$ ]] || { echo "$name: GORILA_CHAIN must be a count, got \"$left\"; no next job" >&2; return 0; }
    [ "$left" -gt 0 ] || return 0
    if [ "$rc" -ne 0 ] || [ -z "$run" ] || [ ! -f "$run/summary.json" ]; then
        echo "$name: the job ended with status $rc${run:+ ($run)} without a clean stop: the chain ends here" >&2
        return 0
    fi
    why=$(jget "$run/summary.json" stop_reason)
    if [ "$why" != signal ]; then
        echo "$name: the run ended ($why): the chain ends here" >&2
        return 0
    fi
    case $run in /*) ;; *) run=$PWD/$run ;; esac
    limit=$(squeue -h -j "${SLURM_JOB_ID:-0}" -o %l 2>/dev/null)
    opts=(--parsable --dependency="afterany:${SLURM_JOB_ID:-0}" --export="ALL,GORILA_CHAIN=$((left - 1))")
    [ -n "${SLURM_JOB_NUM_NODES:-}" ] && opts+=(--nodes="$SLURM_JOB_NUM_NODES")
    [ -n "${SLURM_NTASKS:-}" ] && opts+=(--ntasks="$SLURM_NTASKS")
    [ -n "${SLURM_CPUS_PER_TASK:-}" ] && opts+=(--cpus-per-task="$SLURM_CPUS_PER_TASK")
    [ -n "$limit" ] && [ "$limit" != UNLIMITED ] && opts+=(--time="$limit")
    [ -n "${SLURM_JOB_NAME:-}" ] && opts+=(--job-name="$SLURM_JOB_NAME")
    local more=()
    read -r -a more <<<"${GORILA_CHAIN_OPTS:-}"
    opts+=(${more[@]+"${more[@]}"})
    if next=$(sbatch "${opts[@]}" "$script" --resume "$run" 2>&1); then
        echo "$name: stopped with a final checkpoint; the run goes on in job ${next%%;*} (sbatch ${opts[*]} $script --resume $run)" >&2
    else
        echo "$name: error: stopped with a final checkpoint, but the next job could not be submitted: $next" >&2
    fi
}
