/* SPDX-License-Identifier: MIT */
/* explore.c: see explore.h. */
#include "explore.h"

#include <math.h>

#include "qnet.h"

double explore_linear(double start, double end, uint64_t decay_steps, uint64_t step) {
    if (step >= decay_steps) return end;
    return start + (end - start) * ((double)step / (double)decay_steps);
}

double explore_linear_after(double start, double end, uint64_t begin, uint64_t decay_steps, uint64_t step) {
    if (step < begin) return start;
    return explore_linear(start, end, decay_steps, step - begin);
}

double explore_apex_eps(double eps, double alpha, int i, int n) {
    if (n <= 1) return eps;
    return pow(eps, 1.0 + alpha * (double)i / (double)(n - 1));
}

int explore_egreedy(const float *q, int A, double eps, Rng *rng) {
    if (rng_uniform(rng) < eps) return (int)rng_below(rng, (uint64_t)A);
    int32_t a;
    qnet_argmax(q, 1, A, &a);
    return a;
}
