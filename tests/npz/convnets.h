/* SPDX-License-Identifier: MIT */
/* convnets.h: the conv Q-networks whose export tests/unit/test_npz.c and
 * tests/cli/export_conv.sh check, built directly as QNetSpecs (the config
 * keys for conv networks are not what these tests are about), with
 * parameters drawn from a fixed seed. Header-only: the unit tests and the
 * tests/npz/npz_conv program include it. */
#ifndef GORILA_TEST_CONVNETS_H
#define GORILA_TEST_CONVNETS_H

#include <stdlib.h>

#include "qnet.h"
#include "rng.h"

/* "a": 5x6x2 planes, conv 4 filters k3 s1 (3x4 out), conv 3 filters k2 s2
 * (1x2 out, 6 flat), hidden 5, 3 actions. "b": 4x4x3 planes, conv 5
 * filters k2 s1 (3x3 out, 45 flat), no hidden layer, dueling head, 4
 * actions. Different heights and widths catch an H/W swap; C > 1 catches
 * reading the planes (H, W, C) as (C, H, W) without the permute. */
static inline QNetSpec convnet_spec(char which) {
    QNetSpec s = {0};
    if (which == 'a') {
        s.in_h = 5, s.in_w = 6, s.in_c = 2, s.obs_dim = 60, s.n_actions = 3;
        s.n_conv = 2;
        s.conv[0] = (QNetConvSpec){4, 3, 1};
        s.conv[1] = (QNetConvSpec){3, 2, 2};
        s.n_hidden = 1, s.hidden[0] = 5;
    } else {
        s.in_h = 4, s.in_w = 4, s.in_c = 3, s.obs_dim = 48, s.n_actions = 4;
        s.n_conv = 1;
        s.conv[0] = (QNetConvSpec){5, 2, 1};
        s.dueling = true;
    }
    return s;
}

/* net->n_params parameters as PyTorch would initialize them, from seed. */
static inline float *convnet_params(const QNet *net, uint64_t seed) {
    float *p = malloc(net->n_params * sizeof *p);
    Rng rng;
    rng_seed(&rng, seed, 0);
    qnet_init_params(net, p, &rng);
    return p;
}

#endif
