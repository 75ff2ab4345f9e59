/* SPDX-License-Identifier: MIT */
/* test_zz_blas.c: one BLAS thread for every unit test, as gorila runs
 * (main.c re-executes with OPENBLAS_NUM_THREADS=1; docs/REPRODUCIBILITY.md:
 * a result is reproducible for one kernel and one thread).
 *
 * OpenBLAS starts a pool of threads when the library loads (a thread per
 * core unless OPENBLAS_NUM_THREADS says otherwise), and Criterion runs each
 * test in a process of its own that loads the library again: that start is
 * about a third of the suite's time. The runner sets the variable before
 * it starts the first test process (they inherit it), and each test
 * process sets the count again before its test, whatever it was given. */
#include <cblas.h>
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdlib.h>

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
    (void)set;
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
}

ReportHook(PRE_INIT)(struct criterion_test *test) {
    (void)test;
    openblas_set_num_threads(1);
}

/* The hook ran: the tests compute with one BLAS thread. */
Test(blas, unit_tests_run_with_one_blas_thread) {
    cr_assert_eq(openblas_get_num_threads(), 1);
}
