/* SPDX-License-Identifier: MIT */
/* test_blas_threads.c: one BLAS thread for every unit test, as gorila runs
 * (main.c re-executes with OPENBLAS_NUM_THREADS=1; docs/REPRODUCIBILITY.md:
 * a result is reproducible for one kernel and one thread).
 *
 * OpenBLAS starts a pool of threads when the library loads (a thread per
 * core unless OPENBLAS_NUM_THREADS says otherwise), and Criterion runs each
 * test in a process of its own that loads the library again: that start is
 * about a third of the suite's time. The runner sets the variable before
 * it starts the first test process, and every test process inherits it.
 *
 * Criterion calls report hooks in the runner process (not in the test's),
 * for the whole binary, wherever this file is linked and whatever order
 * its tests run in: nothing here needs to come last. A hook that set the
 * count with openblas_set_num_threads would set the runner's only; the
 * variable is what reaches the tests, and the test below checks that it
 * does. */
#include <cblas.h>
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdlib.h>

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
    (void)set;
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
}

/* The hook ran: the tests compute with one BLAS thread. */
Test(blas, unit_tests_run_with_one_blas_thread) {
    cr_assert_eq(openblas_get_num_threads(), 1);
}
