/* SPDX-License-Identifier: MIT */
/* heldout.h: the held-out test evaluation at the end of a run.
 *
 * checkpoints/best is chosen by the evaluations on eval.seed, and those
 * evaluations are also what it is reported with: the best of many noisy
 * scores overstates the network (a winner's curse). At the end of a run the
 * best and the final checkpoints, as saved, are evaluated again on
 * eval.test_episodes episodes seeded by eval.test_seed, which nothing in the
 * run selects on (the config refuses eval.test_seed equal to eval.seed), and
 * that score is reported beside the selection score: summary.json's test_*
 * keys, the final line, scripts/seeds. "solved_test" judges the best
 * checkpoint (the final one when there is no best) against the env's
 * reward threshold on the test episodes.
 *
 * No MPI: the local trainer and the coordinator call it after the final
 * checkpoint is committed, from the files (what a user loads is what is
 * scored).
 */
#ifndef GORILA_HELDOUT_H
#define GORILA_HELDOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "evaluator.h"

typedef struct {
    bool ran;                 /* eval.test_episodes > 0 and at least one checkpoint scored */
    uint64_t seed;            /* eval.test_seed */
    int episodes;             /* eval.test_episodes */
    bool has_best, has_final;
    EvalResult best, final;   /* valid where has_* */
    bool solved;              /* best (else final) mean >= the env's reward threshold */
    double seconds;           /* wall time of the test evaluation */
    bool interrupted;         /* abandoned (a stop signal): nothing scored, ran false */
    const char *skipped;      /* why it did not run (summary.json test_skipped), NULL when it ran */
} HeldOut;

/* Evaluate run_dir's checkpoints/best (when best_saved) and the final
 * checkpoint final_dir (NULL: none) on the test seed. A checkpoint that
 * cannot be read is left out with a note in err (t->ran false when neither
 * could be scored); returns 0 when everything asked was scored, else -1
 * with err. abandon(arg) (NULL: never) is asked as the evaluator asks it
 * (evaluator.h); when it says to give up, nothing is scored: t->ran false,
 * t->interrupted true, and 0 is returned. */
int heldout_run(const Config *cfg, const char *run_dir, bool best_saved, const char *final_dir,
                EvalAbandonFn abandon, void *arg, HeldOut *t, char *err);

#endif
