/* SPDX-License-Identifier: MIT */
/* test_minatar_mtrand.c: envs/minatar/mtrand.c against numpy's legacy
 * RandomState. The expected values were computed with numpy 1.24.2
 * (Debian's, /usr/bin/python3, Python 3.11.2) by the Python line quoted
 * above each test, on the day the test was written. Built only with
 * MINATAR=1 (the Makefile leaves this file out otherwise). */
#include <criterion/criterion.h>

#include "minatar/minatar.h"
#include "minatar/mtrand.h"

/* np.random.RandomState(5489).randint(0, 2**32, size=1000, dtype=np.uint64)
 * at indices 0, 1, 623, 624, 999 (the raw tempered words: numpy returns
 * next_uint32 itself for a range of 2^32); 624 is the first word after a
 * regeneration of the state. */
Test(minatar_mtrand, raw_words_across_a_regeneration) {
    MtRand r;
    mtrand_seed(&r, 5489);
    uint32_t w[1000];
    for (int i = 0; i < 1000; i++) w[i] = mtrand_next32(&r);
    cr_expect_eq(w[0], 3499211612U);
    cr_expect_eq(w[1], 581869302U);
    cr_expect_eq(w[623], 4020325887U);
    cr_expect_eq(w[624], 4178893912U);
    cr_expect_eq(w[999], 1341017984U);
    mtrand_seed(&r, 0); /* RandomState(0).randint(0, 2**32, size=2, dtype=np.uint64) */
    cr_expect_eq(mtrand_next32(&r), 2357136044U);
    cr_expect_eq(mtrand_next32(&r), 2546248239U);
}

/* r = np.random.RandomState(12345); [r.rand() for _ in range(3)] */
Test(minatar_mtrand, rand_doubles_bit_exact) {
    MtRand r;
    mtrand_seed(&r, 12345);
    cr_expect_eq(mtrand_rand(&r), 0.9296160928171479);
    cr_expect_eq(mtrand_rand(&r), 0.3163755545817859);
    cr_expect_eq(mtrand_rand(&r), 0.18391881167709445);
}

/* r = np.random.RandomState(4294967295); [r.randint(1, 9) for _ in range(5)],
 * [r.randint(6) for _ in range(5)], r.randint(0, 1), r.rand()
 * -> [4, 3, 5, 8, 5] [0, 2, 1, 0, 3] 0 0.5931753493510109: the rejection
 * loop of randint(6) (mask 7) and randint(0, 1) drawing nothing (else the
 * rand() after it would differ). */
Test(minatar_mtrand, randint_rejection_and_range_one) {
    MtRand r;
    mtrand_seed(&r, 4294967295U);
    static const int64_t a[5] = {4, 3, 5, 8, 5}, b[5] = {0, 2, 1, 0, 3};
    for (int i = 0; i < 5; i++) cr_expect_eq(mtrand_randint(&r, 1, 9), a[i], "randint(1, 9) #%d", i);
    for (int i = 0; i < 5; i++) cr_expect_eq(mtrand_randint(&r, 0, 6), b[i], "randint(6) #%d", i);
    cr_expect_eq(mtrand_randint(&r, 0, 1), 0);
    cr_expect_eq(mtrand_rand(&r), 0.5931753493510109);
}

/* r = np.random.RandomState(0); list(r.randint(1, 6, 8)), list(r.rand(2))
 * -> [5, 1, 4, 4, 4, 2, 4, 3] [0.4375872112626925, 0.8917730007820798]:
 * the sized draws of Freeway's _randomize_cars are the scalar draws in
 * order. */
Test(minatar_mtrand, sized_draws_are_scalar_draws_in_order) {
    MtRand r;
    mtrand_seed(&r, 0);
    static const int64_t s[8] = {5, 1, 4, 4, 4, 2, 4, 3};
    for (int i = 0; i < 8; i++) cr_expect_eq(mtrand_randint(&r, 1, 6), s[i], "randint(1, 6) #%d", i);
    cr_expect_eq(mtrand_rand(&r), 0.4375872112626925);
    cr_expect_eq(mtrand_rand(&r), 0.8917730007820798);
}

/* The API's fixed facts: channels (state_shape()[2]) and minimal action
 * sets of the reference's five games. */
Test(minatar_mtrand, channels_and_minimal_action_sets) {
    static const int ch[MINATAR_GAME_COUNT] = {4, 4, 7, 10, 6};
    static const int nmin[MINATAR_GAME_COUNT] = {5, 3, 3, 6, 4};
    for (int g = 0; g < MINATAR_GAME_COUNT; g++) {
        int acts[MINATAR_NUM_ACTIONS];
        cr_expect_eq(minatar_channels((MinatarGame)g), ch[g], "%s", minatar_title((MinatarGame)g));
        cr_expect_eq(minatar_minimal_actions((MinatarGame)g, acts), nmin[g], "%s", minatar_title((MinatarGame)g));
    }
    int acts[MINATAR_NUM_ACTIONS];
    minatar_minimal_actions(MINATAR_SPACE_INVADERS, acts); /* ['n','l','r','f'] */
    cr_expect(acts[0] == 0 && acts[1] == 1 && acts[2] == 3 && acts[3] == 5);
}
