/* SPDX-License-Identifier: MIT */
/* lossguard.h: Gorila's second guard against bad gradients
 * (learner.loss_outlier_sigma): a gradient whose batch loss lies more than
 * sigma standard deviations above the running mean of the losses is
 * dropped.
 *
 * The running mean and variance are exact (Welford) over the first
 * LOSSGUARD_WINDOW losses and then exponential with that window (weight
 * 1 / LOSSGUARD_WINDOW), so they follow the loss as learning moves it. A
 * loss is judged against the statistics of the losses before it, then
 * added to them whether dropped or not (a lasting rise becomes the new
 * normal instead of dropping every gradient from then on). Nothing is
 * dropped before LOSSGUARD_WARMUP losses, nor with sigma 0. Pure: no I/O,
 * no allocation. */
#ifndef GORILA_LOSSGUARD_H
#define GORILA_LOSSGUARD_H

#include <stdbool.h>
#include <stdint.h>

#define LOSSGUARD_WARMUP 100
#define LOSSGUARD_WINDOW 1000

typedef struct {
    double sigma;       /* 0: off */
    uint64_t n;         /* losses seen */
    double mean, var;   /* of the losses seen */
    uint64_t dropped;   /* losses judged outliers */
} LossGuard;

void lossguard_init(LossGuard *g, double sigma);

/* Judges loss (true: an outlier, drop its gradient; counted in dropped),
 * then adds it to the statistics. A non-finite loss is never judged here
 * (the caller's divergence check ends the run first). */
bool lossguard_outlier(LossGuard *g, double loss);

#endif
