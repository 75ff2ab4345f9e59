# SPDX-License-Identifier: MIT
"""A matrix whose cells' budget leaves no updates, refused before anything
runs: learning starts once replay holds replay.min_size transitions
(docs/CONFIG.md), so a run that stops at run.max_env_steps no more than
that ends before its first update (or, at equal numbers, with the few the
learners race in while the job stops). What only the run can tell (a
run.max_seconds too short, say) the report says at its top instead
(lessons.note_no_updates)."""
from .errors import InputError


def _int(cfg, key):
    try:
        return int(cfg.get(key))
    except (TypeError, ValueError):
        return None


def check(effective):
    """effective: {cell key: its effective config (facts.config_check)};
    InputError, one line, when a cell's run.max_env_steps leaves no
    updates."""
    for eff in effective.values():
        steps, least = _int(eff, "run.max_env_steps"), _int(eff, "replay.min_size")
        if steps and least and steps <= least:
            raise InputError("run.max_env_steps (%d) is not above replay.min_size (%d): learning starts once replay "
                             "holds replay.min_size transitions, so every cell would stop before learning starts (0 "
                             "updates, or a few raced in as the job stops); raise run.max_env_steps (e.g. --set "
                             "run.max_env_steps=%d) or lower replay.min_size" % (steps, least, 10 * least))
