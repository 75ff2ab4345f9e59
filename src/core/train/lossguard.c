/* SPDX-License-Identifier: MIT */
/* lossguard.c: see lossguard.h. */
#include "lossguard.h"

#include <math.h>
#include <string.h>

void lossguard_init(LossGuard *g, double sigma) {
    memset(g, 0, sizeof *g);
    g->sigma = sigma;
}

bool lossguard_outlier(LossGuard *g, double loss) {
    if (!isfinite(loss)) return false;
    bool out = g->sigma > 0 && g->n >= LOSSGUARD_WARMUP && loss > g->mean + g->sigma * sqrt(g->var);
    if (out) g->dropped++;
    /* Welford for the first LOSSGUARD_WINDOW, then exponential: the weight
     * of the new loss is 1/n, then 1/LOSSGUARD_WINDOW. */
    g->n++;
    double w = 1.0 / (double)(g->n < LOSSGUARD_WINDOW ? g->n : LOSSGUARD_WINDOW);
    double d = loss - g->mean;
    g->mean += w * d;
    g->var = (1.0 - w) * (g->var + w * d * d);
    return out;
}
