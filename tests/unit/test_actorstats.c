/* SPDX-License-Identifier: MIT */
/* test_actorstats.c: per-actor training returns (src/core/train/actorstats.c),
 * what summary.json's `actors` array and the end-of-run line of a
 * distributed job are made of: each actor's episodes, the mean of its last
 * up to 100 returns (the ring wraps), its best, its epsilon; nothing of one
 * actor leaks into another; the JSON as written; the line capped at 8
 * actors. Every expected value is worked out in the comment beside it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actorstats.h"
#include "explore.h"

Test(actorstats, fresh_actors_have_nothing_yet) {
    ActorStats s;
    actorstats_init(&s, 3);
    cr_assert_eq(s.n, 3);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(s.a[i].episodes, 0);
        cr_expect(isnan(actorstats_mean(&s, i)), "no mean before an episode");
        cr_expect(isnan(s.a[i].best), "no best before an episode");
        cr_expect(isnan(s.a[i].epsilon), "no epsilon until set");
    }
    actorstats_free(&s);
    cr_expect_null(s.a);
    actorstats_free(&s); /* twice is safe */
}

Test(actorstats, zero_actors_and_zeroed_struct_are_safe) {
    ActorStats s;
    actorstats_init(&s, 0);
    cr_expect_eq(s.n, 0);
    cr_expect_null(s.a);
    actorstats_free(&s);
    ActorStats z;
    memset(&z, 0, sizeof z);
    actorstats_free(&z);
}

Test(actorstats, actors_are_kept_apart) {
    ActorStats s;
    actorstats_init(&s, 3);
    actorstats_add(&s, 0, 10);
    actorstats_add(&s, 0, 20);
    actorstats_add(&s, 2, -5);
    actorstats_add(&s, 2, -500);
    actorstats_add(&s, 2, -50);
    cr_expect_eq(s.a[0].episodes, 2);
    cr_expect_eq(s.a[1].episodes, 0);
    cr_expect_eq(s.a[2].episodes, 3);
    cr_expect_float_eq(actorstats_mean(&s, 0), 15.0, 1e-12);   /* (10 + 20) / 2 */
    cr_expect(isnan(actorstats_mean(&s, 1)));
    cr_expect_float_eq(actorstats_mean(&s, 2), -185.0, 1e-12); /* (-5 - 500 - 50) / 3 */
    cr_expect_eq(s.a[0].best, 20.0);
    cr_expect(isnan(s.a[1].best));
    cr_expect_eq(s.a[2].best, -5.0, "a negative first return is a best");
    actorstats_free(&s);
}

Test(actorstats, mean_is_of_the_last_100_episodes_only) {
    ActorStats s;
    actorstats_init(&s, 2);
    /* Actor 1: returns 1, 2, ..., 250. The last 100 are 151..250, mean
     * (151 + 250) / 2 = 200.5; the best is 250; 250 episodes. */
    for (int k = 1; k <= 250; k++) actorstats_add(&s, 1, k);
    cr_expect_eq(s.a[1].episodes, 250);
    cr_expect_float_eq(actorstats_mean(&s, 1), 200.5, 1e-12);
    cr_expect_eq(s.a[1].best, 250.0);
    /* Exactly 100: 1..100 on actor 0, mean 50.5; one more (1000) drops
     * the 1: (5050 - 1 + 1000) / 100 = 60.49. */
    for (int k = 1; k <= 100; k++) actorstats_add(&s, 0, k);
    cr_expect_float_eq(actorstats_mean(&s, 0), 50.5, 1e-12);
    actorstats_add(&s, 0, 1000);
    cr_expect_float_eq(actorstats_mean(&s, 0), 60.49, 1e-12);
    /* The best stays the best once it has left the window. */
    for (int k = 0; k < 100; k++) actorstats_add(&s, 0, 0);
    cr_expect_float_eq(actorstats_mean(&s, 0), 0.0, 1e-12);
    cr_expect_eq(s.a[0].best, 1000.0);
    cr_expect_eq(s.a[0].episodes, 201);
    actorstats_free(&s);
}

/* The JSON of two actors with epsilons 0.4 and 0.00065536 (0.4^8, which
 * pow() gives as 0.00065536000000000034: round-trip digits), one of which
 * has finished no episode. */
static const char want_json[] =
    "{\n"
    "  \"actors\": [\n"
    "    {\n"
    "      \"actor\": 0,\n"
    "      \"epsilon\": 0.4,\n"
    "      \"episodes\": 2,\n"
    "      \"mean_return_last_100\": 22.5,\n"
    "      \"best_return\": 30\n"
    "    },\n"
    "    {\n"
    "      \"actor\": 1,\n"
    "      \"epsilon\": 0.00065536,\n"
    "      \"episodes\": 0,\n"
    "      \"mean_return_last_100\": null,\n"
    "      \"best_return\": null\n"
    "    }\n"
    "  ]\n"
    "}\n";

Test(actorstats, json_is_one_object_per_actor_with_null_before_any_episode) {
    ActorStats s;
    actorstats_init(&s, 2);
    actorstats_add(&s, 0, 15);
    actorstats_add(&s, 0, 30);
    actorstats_set_epsilon(&s, 0, 0.4);
    actorstats_set_epsilon(&s, 1, 0.00065536);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    JsonW j;
    json_init(&j, f, true);
    json_begin_object(&j, NULL);
    actorstats_json(&j, "actors", &s);
    json_end_object(&j);
    fclose(f);
    cr_expect_str_eq(text, want_json);
    free(text);
    actorstats_free(&s);
}

Test(actorstats, line_shows_epsilon_and_mean_per_actor) {
    ActorStats s;
    actorstats_init(&s, 3);
    /* Ape-X with 3 actors: 0.4^1, 0.4^4.5 = 0.016190..., 0.4^8 = 0.00065536 */
    for (int i = 0; i < 3; i++) actorstats_set_epsilon(&s, i, explore_apex_eps(0.4, 7, i, 3));
    actorstats_add(&s, 0, 23.1);
    actorstats_add(&s, 2, 180);
    actorstats_add(&s, 2, 194);
    char line[256];
    actorstats_line(line, sizeof line, &s);
    cr_expect_str_eq(line, "actors: eps 0.400 -> mean 23.1 | eps 0.016 -> mean - | eps 0.00066 -> mean 187.0");
    actorstats_free(&s);
}

Test(actorstats, line_stops_after_8_actors) {
    ActorStats s;
    actorstats_init(&s, 12);
    for (int i = 0; i < 12; i++) {
        actorstats_set_epsilon(&s, i, 0.5);
        actorstats_add(&s, i, i);
    }
    char line[512];
    actorstats_line(line, sizeof line, &s);
    const char *want = "actors: eps 0.500 -> mean 0.0 | eps 0.500 -> mean 1.0 | eps 0.500 -> mean 2.0 | "
                       "eps 0.500 -> mean 3.0 | eps 0.500 -> mean 4.0 | eps 0.500 -> mean 5.0 | "
                       "eps 0.500 -> mean 6.0 | eps 0.500 -> mean 7.0 | ... (12 actors)";
    cr_expect_str_eq(line, want);
    /* Exactly 8: no "...". */
    s.n = 8;
    actorstats_line(line, sizeof line, &s);
    cr_expect_null(strstr(line, "..."), "%s", line);
    s.n = 12;
    /* A short buffer is cut, terminated, never overrun. */
    char small[20];
    memset(small, 'x', sizeof small);
    actorstats_line(small, sizeof small, &s);
    cr_expect_str_eq(small, "actors: eps 0.500 -");
    actorstats_free(&s);
}
