/* SPDX-License-Identifier: MIT */
/* test_config.c: the config loader (src/core/config/config.c).
 *
 * Every file in tests/fixtures/bad_configs/ is listed below with the exact error it
 * must produce, FILE:LINE:COL included; the expected texts were worked out
 * by reading each file (columns count characters from 1), and a test checks
 * that no file in that directory goes untested. Then: defaults, the example
 * configs, the config_write round trip, --set, size and depth bounds, and
 * file-system errors. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "env.h"
#include "util.h"

/* The MinAtar ids in env.name's list of choices (a build with MINATAR=1;
 * the Makefile compiles this file with its definitions). */
#ifdef GORILA_MINATAR
#define MINATAR_IDS ", MinAtar/{Asterix,Breakout,Freeway,Seaquest,SpaceInvaders}-v0|-v1"
#else
#define MINATAR_IDS ""
#endif

#define BAD "tests/fixtures/bad_configs/"

typedef struct {
    const char *file;
    const char *want; /* the error after "tests/fixtures/bad_configs/FILE" */
} BadCase;

/* In an expected error, ENV_NAMES stands for the registered environments'
 * names, in the registry's order, ", " between, the MinAtar ids summed up
 * as MINATAR_IDS, then the Python forms (expect_of): so that adding an environment
 * (docs/ENVIRONMENTS.md) changes no expected text. */
#define ENV_NAMES "{registry names}"

/* expect_of PREFIX TEXT OUT: PREFIX then TEXT, with ENV_NAMES spelled out. */
static void expect_of(const char *prefix, const char *text, char *out, size_t n) {
    const char *mark = strstr(text, ENV_NAMES);
    if (!mark) {
        snprintf(out, n, "%s%s", prefix, text);
        return;
    }
    char names[ERR_LEN] = "";
    for (int i = 0; i < env_registry_count; i++) {
        if (!strncmp(env_registry[i]->name, "MinAtar/", 8)) continue;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", env_registry[i]->name);
    }
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s", MINATAR_IDS);
    /* and the Python environments' forms */
    snprintf(names + strlen(names), sizeof names - strlen(names), ", python:MODULE:CALLABLE or gymnasium:ID");
    snprintf(out, n, "%s%.*s%s%s", prefix, (int)(mark - text), text, names, mark + strlen(ENV_NAMES));
}

static const BadCase bad_cases[] = {
    /* unknown keys, with and without a suggestion */
    {"unknown_key_suggest.yaml", ":4:3: roles.lerners: unknown key (did you mean \"learners\"?)"},
    {"unknown_key_list.yaml",
     ":3:3: roles.banana: unknown key (valid keys: actors, replay_shards, learners, param_servers)"},
    {"unknown_section.yaml", ":3:1: optimiser: unknown key (did you mean \"optimizer\"?)"},
    {"key_in_wrong_section.yaml", ":4:3: roles.gamma: unknown key (did you mean \"agent.gamma\"?)"},
    /* duplicates */
    {"duplicate_key.yaml", ":5:3: roles.actors: duplicate key (first defined at line 2)"},
    {"duplicate_section.yaml", ":5:1: run: duplicate key (first defined at line 1)"},
    /* wrong types */
    {"wrong_type_word.yaml", ":2:13: roles.learners: expected a positive integer, got \"two\""},
    {"quoted_number.yaml", ":2:11: roles.actors: expected a positive integer, got the quoted string \"5\""},
    {"bad_bool.yaml", ":3:12: network.dueling: expected true or false, got \"yes\""},
    {"null_empty.yaml", ":2:8: run.seed: expected a non-negative integer, got an empty value"},
    {"null_tilde.yaml", ":2:10: agent.gamma: expected a number in [0, 1], got ~ (null)"},
    {"float_for_int.yaml", ":2:15: replay.batch_size: expected a positive integer, got \"64.0\""},
    {"leading_zero.yaml", ":2:9: run.seed: expected a non-negative integer, got \"0755\""},
    {"mapping_for_scalar.yaml", ":3:5: run.seed: expected a non-negative integer, got a mapping"},
    {"scalar_for_section.yaml", ":1:8: roles: expected a mapping of roles keys, got \"4\""},
    {"empty_section.yaml", ":1:5: run: expected a mapping of run keys, got an empty value"},
    /* numbers out of range, overflow, NaN, Inf */
    {"overflow_u64.yaml", ":2:9: run.seed: expected an integer in [0, 18446744073709551615], got 18446744073709551616"},
    {"overflow_int.yaml", ":2:9: actor.envs: expected an integer in [1, 4096], got 4294967297"},
    {"nan.yaml", ":3:7: optimizer.lr: expected a finite number in (0, 10], got .nan"},
    {"inf.yaml", ":2:10: agent.gamma: expected a finite number in [0, 1], got -.inf"},
    {"huge_number.yaml",
     ":2:16: agent.huber_delta: expected a finite number in (0, 1000000], got 1e999 (too large for a double)"},
    {"negative_count.yaml", ":2:11: roles.actors: expected an integer in [1, 1024], got -3"},
    {"probability_range.yaml", ":2:10: agent.gamma: expected a number in [0, 1], got 1.01"},
    {"open_bound.yaml", ":2:10: optimizer.beta2: expected a number in [0, 1), got 1"},
    {"interval_too_small.yaml", ":2:21: logging.interval_seconds: expected a number in [0.1, 86400], got 0.05"},
    /* enums and names */
    {"enum_suggest.yaml", ":2:9: sync.mode: expected one of ps_sync, ps_async, ps_bounded, allreduce, gossip, "
                          "easgd, local_sgd, got \"ps_asynch\" (did you mean \"ps_async\"?)"},
    {"enum_unknown.yaml", ":2:9: replay.kind: expected one of uniform, prioritized, got \"reservoir\""},
    {"env_name_suggest.yaml", ":2:9: env.name: expected one of " ENV_NAMES ", got \"Acrobot-v0\" (did you mean "
                              "\"Acrobot-v1\"?)"},
    {"bad_run_name.yaml",
     ":2:9: run.name: expected 1 to 63 characters from A-Z a-z 0-9 . _ -, got \"my run/1\""},
    {"run_name_dotdot.yaml", ":2:9: run.name: expected a name other than \".\" and \"..\", got \"..\""},
    /* lists */
    {"torque_range.yaml", ":3:13: env.torques[0]: expected a number in [-2, 2], got -3 (Pendulum-v1's "
                          "max_torque is 2; it would clip larger values)"},
    {"torque_duplicate.yaml", ":3:20: env.torques[2]: expected distinct torques, got -1.0 again (as env.torques[0])"},
    {"hidden_too_many.yaml", ":2:11: network.hidden: expected a list of 1 to 8 layer widths, got 9 of them"},
    {"hidden_zero.yaml", ":2:16: network.hidden[1]: expected an integer in [1, 4096], got 0"},
    /* YAML features a config does not use */
    {"anchor.yaml", ":2:9: anchors and aliases are not supported"},
    {"alias.yaml", ":4:9: anchors and aliases are not supported"},
    {"tag.yaml", ":2:9: tags are not supported, found \"tag:yaml.org,2002:int\""},
    {"too_deep_flow.yaml", ":2:25: expected at most 16 levels of nesting, found more"},
    {"too_deep_block.yaml", ":17:17: expected at most 16 levels of nesting, found more"},
    /* the shape of the file */
    {"empty.yaml", ":1:1: expected a mapping of sections (run:, env:, ...), got an empty file"},
    {"comments_only.yaml", ":1:1: expected a mapping of sections (run:, env:, ...), got only comments"},
    {"multi_document.yaml", ":3:1: expected one YAML document, found a second one"},
    {"root_list.yaml", ":1:1: expected a mapping of sections (run:, env:, ...) at the top level, got a list"},
    {"root_scalar.yaml",
     ":1:1: expected a mapping of sections (run:, env:, ...) at the top level, got \"hello world\""},
    {"tab_indent.yaml", ":2:1: invalid YAML: found a tab; indent with spaces"},
    {"unclosed_list.yaml", ":3:10: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence at "
                           "line 2, column 11)"},
    /* bytes that are not UTF-8 text */
    {"nul_byte.yaml", ":2:11: expected UTF-8 text, found a NUL byte (is this a binary file?)"},
    {"invalid_utf8.yaml", ":3:20: expected UTF-8 text, found the byte 0xff, which is not valid UTF-8"},
    {"control_char.yaml", ":2:10: expected printable text, found the control character U+0001"},
    {"utf16.yaml", ":1:1: expected UTF-8 text, found a UTF-16 byte order mark"},
    /* keys that contradict each other: the error points at the key the file set */
    {"combo_allreduce_ps.yaml", ":3:3: roles.param_servers: sync.mode allreduce uses no parameter servers, but "
                                "roles.param_servers is 2; set roles.param_servers: 0"},
    {"combo_allreduce_default_ps.yaml", ":2:3: sync.mode: sync.mode allreduce uses no parameter servers, but "
                                        "roles.param_servers is 1 (the default); set roles.param_servers: 0"},
    {"combo_ps_no_servers.yaml", ":2:3: roles.param_servers: sync.mode ps_async with roles.param_servers 0 keeps "
                                 "the parameters inside the learner, which needs exactly one learner, but "
                                 "roles.learners is 2; add a parameter server or use roles.learners: 1"},
    {"combo_min_size_batch.yaml", ":3:3: replay.min_size: replay.min_size (100) must be at least "
                                  "replay.batch_size (256): learning cannot start before a batch can be sampled"},
    {"combo_min_size_capacity.yaml",
     ":3:3: replay.min_size: replay.min_size (10000) must be at most replay.capacity (5000): the buffer could "
     "never hold enough transitions to start learning"},
    {"combo_capacity_shards.yaml",
     ":4:3: replay.capacity: replay.capacity (1000) must be at least roles.replay_shards * replay.batch_size "
     "(8 * 128 = 1024): every shard must hold a full batch"},
    {"combo_shards_actors.yaml", ":3:3: roles.replay_shards: roles.replay_shards (3) must be at most roles.actors "
                                 "(2): actor a feeds shard a mod replay_shards, so a shard without an actor would "
                                 "never fill"},
    {"prio_alpha_range.yaml", ":3:10: replay.alpha: expected a number in [0, 1], got 1.5"},
    {"prio_beta_range.yaml", ":3:15: replay.beta_final: expected a number in [0, 1], got -0.1"},
    {"prio_eps_zero.yaml", ":3:17: replay.priority_eps: expected a number in (0, 1000000], got 0"},
    {"trace_events_small.yaml", ":3:17: logging.trace_events: expected an integer in [16, 10000000], got 4"},
    {"apex_key_uniform.yaml", ":3:3: replay.alpha: replay.alpha applies to prioritized replay only, but replay.kind "
                              "is uniform (the default); set replay.kind: prioritized, or remove replay.alpha"},
    {"sync_key_other_mode.yaml", ":3:3: sync.gossip_every: sync.gossip_every applies to sync.mode gossip only, but "
                                 "sync.mode is ps_async, which ignores it; set sync.mode: gossip, or remove "
                                 "sync.gossip_every"},
    {"combo_explore.yaml", ":3:3: explore.end: explore.end (0.5) must be at most explore.start (0.2)"},
    {"torques_cartpole.yaml", ":3:3: env.torques: only Pendulum-v1 takes env.torques, but env.name is CartPole-v1"},
};
#define N_BAD (sizeof bad_cases / sizeof bad_cases[0])

Test(config_bad, every_bad_file_gives_its_exact_error) {
    for (size_t i = 0; i < N_BAD; i++) {
        char path[512], want[ERR_LEN], err[ERR_LEN] = "";
        Config cfg;
        snprintf(path, sizeof path, BAD "%s", bad_cases[i].file);
        expect_of(path, bad_cases[i].want, want, sizeof want);
        cr_expect_eq(config_load(&cfg, path, NULL, 0, err), -1, "%s loaded", path);
        cr_expect_str_eq(err, want, "%s", path);
    }
}

Test(config_bad, every_file_in_the_directory_is_checked) {
    DIR *d = opendir(BAD);
    cr_assert_not_null(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        files++;
        bool listed = false;
        for (size_t i = 0; i < N_BAD; i++) listed |= !strcmp(bad_cases[i].file, e->d_name);
        cr_expect(listed, "%s has no expected error in test_config.c", e->d_name);
    }
    closedir(d);
    cr_expect_eq(files, (int)N_BAD);
    cr_expect_geq(files, 25);
}

/* The same text from memory gives the same error under the given name. */
Test(config_bad, load_string_reports_the_name) {
    Config cfg;
    char err[ERR_LEN];
    const char text[] = "roles:\n  lerners: 2\n";
    cr_assert_eq(config_load_string(&cfg, "x.yaml", text, strlen(text), err), -1);
    cr_assert_str_eq(err, "x.yaml:2:3: roles.lerners: unknown key (did you mean \"learners\"?)");
}

/* Line breaks are counted as libyaml counts them, and a BOM is no column. */
Test(config_bad, positions_with_crlf_bom_and_multibyte_text) {
    Config cfg;
    char err[ERR_LEN];
    const char crlf[] = "run:\r\n  seed: x\r\n";
    cr_assert_eq(config_load_string(&cfg, "c.yaml", crlf, strlen(crlf), err), -1);
    cr_assert_str_eq(err, "c.yaml:2:9: run.seed: expected a non-negative integer, got \"x\"");
    const char bom[] = "\xEF\xBB\xBFrun:\n  seed: x\n";
    cr_assert_eq(config_load_string(&cfg, "b.yaml", bom, strlen(bom), err), -1);
    cr_assert_str_eq(err, "b.yaml:2:9: run.seed: expected a non-negative integer, got \"x\"");
    const char bad_after_bom[] = "\xEF\xBB\xBFrun: \xC3\xA9\xFF\n";
    cr_assert_eq(config_load_string(&cfg, "u.yaml", bad_after_bom, strlen(bad_after_bom), err), -1);
    cr_assert_str_eq(err, "u.yaml:1:7: expected UTF-8 text, found the byte 0xff, which is not valid UTF-8");
    /* overlong encoding of '/', and a UTF-16 surrogate encoded in UTF-8 */
    const char overlong[] = "run:\n  out_dir: \xC0\xAF\n";
    cr_assert_eq(config_load_string(&cfg, "o.yaml", overlong, strlen(overlong), err), -1);
    cr_assert_str_eq(err, "o.yaml:2:12: expected UTF-8 text, found the byte 0xc0, which is not valid UTF-8");
    const char surrogate[] = "run:\n  out_dir: \xED\xA0\x80\n";
    cr_assert_eq(config_load_string(&cfg, "s.yaml", surrogate, strlen(surrogate), err), -1);
    cr_assert_str_eq(err, "s.yaml:2:12: expected UTF-8 text, found the byte 0xed, which is not valid UTF-8");
}

/* Values in messages stay on one line and are cut when long. */
Test(config_bad, shown_values_are_escaped_and_cut) {
    Config cfg;
    char err[ERR_LEN];
    const char text[] = "run:\n  seed: \"a\\nb\\\"c\"\n";
    cr_assert_eq(config_load_string(&cfg, "e.yaml", text, strlen(text), err), -1);
    cr_assert_str_eq(err, "e.yaml:2:9: run.seed: expected a non-negative integer, got the quoted string "
                          "\"a\\nb\\\"c\"");
    char longv[200], want[ERR_LEN];
    snprintf(longv, sizeof longv, "run:\n  seed: %0100d\n", 7);
    cr_assert_eq(config_load_string(&cfg, "l.yaml", longv, strlen(longv), err), -1);
    /* the first 48 of the 100 characters, then "..." */
    snprintf(want, sizeof want, "l.yaml:2:9: run.seed: expected a non-negative integer, got \"%048d...\"", 0);
    cr_assert_str_eq(err, want);
}

/* ---- defaults ------------------------------------------------------------- */

Test(config_defaults, every_default_matches_the_documented_value) {
    Config c;
    char err[ERR_LEN];
    config_defaults(&c);
    cr_assert_eq(config_validate(&c, err), 0, "%s", err);
    cr_expect_str_eq(c.run.name, "run");
    cr_expect_str_eq(c.run.out_dir, "runs");
    cr_expect_eq(c.run.seed, 1);
    cr_expect_eq(c.run.mode, RUN_DISTRIBUTED);
    cr_expect_eq(c.run.max_env_steps, 100000);
    cr_expect_eq(c.run.max_updates, 0);
    cr_expect_eq(c.run.max_seconds, 0);
    cr_expect_eq(c.run.stop_deadline_seconds, 10);
    cr_expect(c.run.stop_when_solved);
    cr_expect_eq(c.run.blas_threads, 1);
    cr_expect_str_eq(c.env.name, "CartPole-v1");
    cr_expect_eq(c.env.max_episode_steps, 0);
    cr_expect_eq(c.env.n_torques, 3);
    cr_expect(c.env.torques[0] == -2 && c.env.torques[1] == 0 && c.env.torques[2] == 2);
    cr_expect(c.roles.actors == 1 && c.roles.replay_shards == 1 && c.roles.learners == 1 &&
              c.roles.param_servers == 1);
    cr_expect(c.sync.mode == SYNC_PS_SYNC && c.sync.staleness == 4 && c.sync.learner_pull_every == 1);
    cr_expect(c.actor.envs == 1 && c.actor.pull_every == 100 && c.actor.chunk == 32);
    cr_expect(c.replay.kind == REPLAY_UNIFORM && c.replay.capacity == 100000 && c.replay.batch_size == 64 &&
              c.replay.min_size == 1000);
    cr_expect(c.replay.samples_per_insert == 0 && c.replay.spi_tolerance == 0.01);
    cr_expect(c.network.n_hidden == 2 && c.network.hidden[0] == 64 && c.network.hidden[1] == 64 &&
              !c.network.dueling);
    cr_expect(c.agent.gamma == 0.99 && c.agent.n_step == 1 && c.agent.double_dqn && c.agent.huber_delta == 1.0 &&
              c.agent.train_every == 1 && c.agent.gradient_steps == 1 && c.agent.target_update == TARGET_HARD &&
              c.agent.target_every == 500 && c.agent.tau == 0.005);
    cr_expect(c.optimizer.kind == OPT_ADAM && c.optimizer.lr == 1e-3 && c.optimizer.beta1 == 0.9 &&
              c.optimizer.beta2 == 0.999 && c.optimizer.eps == 1e-8 && c.optimizer.decay == 0.95 &&
              c.optimizer.centered && c.optimizer.momentum == 0 && c.optimizer.grad_clip == 10);
    cr_expect(c.explore.kind == EXPLORE_LINEAR && c.explore.start == 1.0 && c.explore.end == 0.05 &&
              c.explore.decay_steps == 10000 && c.explore.apex_eps == 0.4 && c.explore.apex_alpha == 7);
    cr_expect(c.eval.every_updates == 1000 && c.eval.episodes == 100 && c.eval.seed == 12345);
    cr_expect(c.checkpoint.every_seconds == 60 && c.checkpoint.every_updates == 0 && c.checkpoint.keep == 2 &&
              !c.checkpoint.save_replay);
    cr_expect(c.logging.interval_seconds == 2 && c.logging.progress == PROGRESS_AUTO );
}

Test(config_defaults, an_empty_mapping_is_all_defaults) {
    Config a, b;
    char err[ERR_LEN];
    cr_assert_eq(config_load_string(&a, "d.yaml", "{}", 2, err), 0, "%s", err);
    config_defaults(&b);
    cr_assert(config_same(&a, &b));
    cr_assert_str_eq(a.run.name, "run");
    cr_assert_str_eq(a.source, "d.yaml");
}

Test(config_defaults, enum_names) {
    cr_assert_str_eq(config_sync_name(SYNC_PS_BOUNDED), "ps_bounded");
    cr_assert_str_eq(config_sync_name(SYNC_ALLREDUCE), "allreduce");
    cr_assert_str_eq(config_optim_name(OPT_RMSPROP), "rmsprop");
    cr_assert_str_eq(config_replay_name(REPLAY_UNIFORM), "uniform");
}

/* ---- good configs ----------------------------------------------------------- */

static const char *const examples[] = {
    "configs/cartpole.yaml",       "configs/acrobot.yaml",       "configs/mountaincar.yaml",
    "configs/pendulum.yaml",       "configs/local/cartpole.yaml", "configs/local/acrobot.yaml",
    "configs/local/mountaincar.yaml", "configs/local/pendulum.yaml",
};
#define N_EXAMPLES (sizeof examples / sizeof examples[0])

Test(config_good, every_example_config_loads) {
    const char *env_of[] = {"CartPole-v1", "Acrobot-v1", "MountainCar-v0", "Pendulum-v1"};
    for (size_t i = 0; i < N_EXAMPLES; i++) {
        Config c;
        char err[ERR_LEN] = "";
        cr_expect_eq(config_load(&c, examples[i], NULL, 0, err), 0, "%s: %s", examples[i], err);
        cr_expect_str_eq(c.env.name, env_of[i % 4], "%s", examples[i]);
        cr_expect_eq(c.run.mode, i < 4 ? RUN_DISTRIBUTED : RUN_LOCAL, "%s", examples[i]);
    }
}

Test(config_good, every_yaml_in_configs_is_an_example) {
    const char *dirs[] = {"configs", "configs/local"};
    for (int d = 0; d < 2; d++) {
        DIR *dir = opendir(dirs[d]);
        cr_assert_not_null(dir);
        struct dirent *e;
        while ((e = readdir(dir))) {
            size_t n = strlen(e->d_name);
            if (n < 5 || strcmp(e->d_name + n - 5, ".yaml")) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            bool listed = false;
            for (size_t i = 0; i < N_EXAMPLES; i++) listed |= !strcmp(examples[i], path);
            cr_expect(listed, "%s is not loaded by any test", path);
        }
        closedir(dir);
    }
}

Test(config_good, pendulum_example_sets_its_torques) {
    Config c;
    char err[ERR_LEN];
    cr_assert_eq(config_load(&c, "configs/pendulum.yaml", NULL, 0, err), 0, "%s", err);
    cr_assert_eq(c.env.n_torques, 5);
    cr_assert(c.env.torques[0] == -2 && c.env.torques[2] == 0 && c.env.torques[4] == 2);
}

Test(config_good, every_form_of_every_type) {
    Config c;
    char err[ERR_LEN];
    const char text[] = "run:\n"
                        "  name: 'exp.1_a-b'\n"
                        "  out_dir: \"runs/\\u00e9t\\u00e9\"\n"
                        "  seed: 18446744073709551615\n"
                        "  mode: \"local\"\n"
                        "  max_seconds: +.5e2\n"
                        "  stop_when_solved: false\n"
                        "env: {name: Pendulum-v1, torques: [-2, -0.5, 0.5, 2]}\n"
                        "roles: {actors: +3, param_servers: 0}\n"
                        "sync: {mode: allreduce}\n"
                        "network:\n"
                        "  hidden:\n"
                        "    - 256\n"
                        "    - 128\n"
                        "    - 4096\n"
                        "  dueling: true\n"
                        "optimizer: {lr: 1E-4, momentum: 0.0}\n"
                        "explore: {start: 1, end: 1}\n";
    cr_assert_eq(config_load_string(&c, "t.yaml", text, strlen(text), err), 0, "%s", err);
    cr_expect_str_eq(c.run.name, "exp.1_a-b");
    cr_expect_str_eq(c.run.out_dir, "runs/\xC3\xA9t\xC3\xA9");
    cr_expect_eq(c.run.seed, UINT64_MAX);
    cr_expect_eq(c.run.mode, RUN_LOCAL);
    cr_expect_eq(c.run.max_seconds, 50);
    cr_expect(!c.run.stop_when_solved);
    cr_expect(c.env.n_torques == 4 && c.env.torques[1] == -0.5);
    cr_expect_eq(c.roles.actors, 3);
    cr_expect_eq(c.sync.mode, SYNC_ALLREDUCE);
    cr_expect(c.network.n_hidden == 3 && c.network.hidden[0] == 256 && c.network.hidden[2] == 4096);
    cr_expect(c.network.dueling);
    cr_expect_eq(c.optimizer.lr, 1e-4);
}

/* config_write's text loads back to the same settings. */
static void round_trip(const Config *c) {
    char *text = NULL, err[ERR_LEN];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    config_write(c, f);
    fclose(f);
    Config back;
    cr_assert_eq(config_load_string(&back, "written.yaml", text, len, err), 0, "%s\n%s", err, text);
    cr_assert(config_same(c, &back), "differs after round trip:\n%s", text);
    free(text);
}

Test(config_good, config_write_round_trips) {
    Config c;
    char err[ERR_LEN];
    config_defaults(&c);
    round_trip(&c);
    for (size_t i = 0; i < N_EXAMPLES; i++) {
        cr_assert_eq(config_load(&c, examples[i], NULL, 0, err), 0, "%s", err);
        round_trip(&c);
    }
    /* Awkward values: shortest-form doubles, negative zero, a quoted path. */
    const char text[] = "run: {out_dir: \"a \\\"q\\\" \\\\ b/\\u2028\\u00e9/\\U0001F600\", seed: 0, max_seconds: 1e-3}\n"
                        "env: {name: Pendulum-v1, torques: [-0.0, 0.1, 1.9999999999999998]}\n"
                        "replay: {samples_per_insert: 0.30000000000000004, spi_tolerance: 4.9e-324}\n"
                        "agent: {gamma: 0.1, huber_delta: 123456.789}\n"
                        "optimizer: {lr: 3e-07}\n";
    cr_assert_eq(config_load_string(&c, "odd.yaml", text, strlen(text), err), 0, "%s", err);
    round_trip(&c);
}

Test(config_good, config_same_notices_differences) {
    Config a, b;
    config_defaults(&a);
    config_defaults(&b);
    cr_assert(config_same(&a, &b));
    b.replay.spi_tolerance = 0.010000000000000002;
    cr_assert(!config_same(&a, &b));
    config_defaults(&b);
    b.network.hidden[1] = 65;
    cr_assert(!config_same(&a, &b));
    config_defaults(&b);
    snprintf(b.run.out_dir, sizeof b.run.out_dir, "runs2");
    cr_assert(!config_same(&a, &b));
}

Test(config_good, run_name_defaults_to_the_file_stem) {
    char dir[] = "/tmp/gorila-cfg-XXXXXX", path[128], err[ERR_LEN];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/my-exp.v2.yaml", dir);
    FILE *f = fopen(path, "w");
    fputs("run: {seed: 3}\n", f);
    fclose(f);
    Config c;
    cr_assert_eq(config_load(&c, path, NULL, 0, err), 0, "%s", err);
    cr_assert_str_eq(c.run.name, "my-exp.v2");
    const char *sets[] = {"run.name=other"};
    cr_assert_eq(config_load(&c, path, sets, 1, err), 0, "%s", err);
    cr_assert_str_eq(c.run.name, "other");

    /* The run directory: file stem, mode, learners, seed without run.name
     * (sync.mode for a distributed run, "local" and 1 learner for a local
     * one); run.name itself when the file or a --set gives it. */
    const char *dist[] = {"run.mode=distributed", "sync.mode=allreduce", "roles.param_servers=0",
                          "roles.learners=2", "run.seed=12345678901234567890"};
    char name[CFG_NAME_LEN + 64];
    cr_assert_eq(config_load(&c, path, NULL, 0, err), 0, "%s", err);
    config_run_dir_name(&c, name, sizeof name);
    cr_assert_str_eq(name, "my-exp.v2-ps_sync-l1-s3", "run.mode's default is distributed, sync.mode's ps_sync");
    const char *local[] = {"run.mode=local", "roles.learners=2"};
    cr_assert_eq(config_load(&c, path, local, 2, err), 0, "%s", err);
    config_run_dir_name(&c, name, sizeof name);
    cr_assert_str_eq(name, "my-exp.v2-local-l1-s3");
    cr_assert_eq(config_load(&c, path, dist, 5, err), 0, "%s", err);
    config_run_dir_name(&c, name, sizeof name);
    cr_assert_str_eq(name, "my-exp.v2-allreduce-l2-s12345678901234567890");
    cr_assert_eq(config_load(&c, path, sets, 1, err), 0, "%s", err);
    config_run_dir_name(&c, name, sizeof name);
    cr_assert_str_eq(name, "other");
    f = fopen(path, "w");
    fputs("run: {seed: 3, name: fixed}\n", f);
    fclose(f);
    cr_assert_eq(config_load(&c, path, dist, 5, err), 0, "%s", err);
    config_run_dir_name(&c, name, sizeof name);
    cr_assert_str_eq(name, "fixed");
    unlink(path);

    /* A stem that is no valid run name must be replaced, not mangled. */
    snprintf(path, sizeof path, "%s/my exp.yaml", dir);
    f = fopen(path, "w");
    fputs("run: {seed: 3}\n", f);
    fclose(f);
    char want[ERR_LEN];
    snprintf(want, sizeof want,
             "%s: run.name: expected 1 to 63 characters from A-Z a-z 0-9 . _ -, got \"my exp\" "
             "(the file name's stem; set run.name)",
             path);
    cr_assert_eq(config_load(&c, path, NULL, 0, err), -1);
    cr_assert_str_eq(err, want);
    unlink(path);
    rmdir(dir);
}

/* Prioritized replay loads with every key, for local and distributed runs. */
Test(config_good, prioritized_replay_loads) {
    static const char text[] = "run: {mode: local}\n"
                               "replay: {kind: prioritized, alpha: 0.7, beta: 0.5, beta_final: 1, beta_steps: 1000,\n"
                               "         priority_eps: 0.001, initial_priority: max}\n";
    Config c;
    char err[ERR_LEN];
    cr_assert_eq(config_load_string(&c, "p.yaml", text, strlen(text), err), 0, "%s", err);
    cr_assert_eq(c.replay.kind, REPLAY_PRIORITIZED);
    cr_assert_eq(c.replay.initial_priority, PRIORITY_MAX);
    cr_assert_float_eq(c.replay.alpha, 0.7, 1e-12);
    cr_assert_float_eq(c.replay.priority_eps, 0.001, 1e-15);
    cr_assert_eq(c.replay.beta_steps, 1000);
    cr_assert_eq(config_set(&c, "run.mode=distributed", err), 0, "%s", err);
}

/* ---- --set -------------------------------------------------------------------- */

Test(config_set, overrides_apply_in_order_and_are_validated_once) {
    Config c;
    char err[ERR_LEN];
    const char *sets[] = {"roles.actors=3",        "network.hidden=[128, 128]", "optimizer.lr=5e-4",
                          "sync.mode=allreduce",   "roles.param_servers=0",     "run.name=\"abc\"",
                          "roles.actors=4",        "network.dueling=true",      "env.name=Pendulum-v1",
                          "env.torques=[-1, 1]"};
    cr_assert_eq(config_load(&c, "configs/cartpole.yaml", sets, 10, err), 0, "%s", err);
    cr_expect_eq(c.roles.actors, 4);
    cr_expect(c.network.n_hidden == 2 && c.network.hidden[0] == 128 && c.network.hidden[1] == 128);
    cr_expect_eq(c.optimizer.lr, 5e-4);
    cr_expect_eq(c.sync.mode, SYNC_ALLREDUCE);
    cr_expect_eq(c.roles.param_servers, 0);
    cr_expect_str_eq(c.run.name, "abc");
    cr_expect(c.network.dueling);
    cr_expect(c.env.n_torques == 2 && c.env.torques[0] == -1 && c.env.torques[1] == 1);
}

/* A sync mode's own key set under another mode would be ignored silently
 * (docs/CONFIG.md): each is refused, naming the modes that read it, under
 * every mode that does not read it, unless it is at its default; under a
 * mode that reads it, accepted. */
Test(config_set, a_sync_key_of_another_mode_is_refused_unless_at_its_default) {
    static const struct {
        const char *set, *dflt, *modes;
    } keys[] = {
        {"sync.staleness=5", "sync.staleness=4", "ps_bounded"},
        {"sync.learner_pull_every=2", "sync.learner_pull_every=1", "ps_async ps_bounded"},
        {"sync.allreduce_impl=naive", "sync.allreduce_impl=ring", "allreduce local_sgd"},
        {"sync.gossip_every=7", "sync.gossip_every=4", "gossip"},
        {"sync.gossip_topology=ring", "sync.gossip_topology=random", "gossip"},
        {"sync.easgd_every=7", "sync.easgd_every=4", "easgd"},
        {"sync.easgd_alpha=0.25", "sync.easgd_alpha=0.5", "easgd"},
        {"sync.average_every=3", "sync.average_every=8", "local_sgd"},
    };
    /* Each mode with a layout it accepts. */
    static const struct {
        const char *mode, *ps, *learners;
    } modes[] = {
        {"ps_sync", "roles.param_servers=1", "roles.learners=1"},
        {"ps_async", "roles.param_servers=1", "roles.learners=1"},
        {"ps_bounded", "roles.param_servers=1", "roles.learners=1"},
        {"allreduce", "roles.param_servers=0", "roles.learners=2"},
        {"gossip", "roles.param_servers=0", "roles.learners=2"},
        {"easgd", "roles.param_servers=1", "roles.learners=2"},
        {"local_sgd", "roles.param_servers=0", "roles.learners=2"},
    };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        char mode[64];
        snprintf(mode, sizeof mode, "sync.mode=%s", modes[m].mode);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            Config c;
            char err[ERR_LEN] = "", word[32];
            snprintf(word, sizeof word, " %s ", modes[m].mode);
            char among[64];
            snprintf(among, sizeof among, " %s ", keys[k].modes);
            bool reads = strstr(among, word) != NULL;
            const char *sets[] = {mode, modes[m].ps, modes[m].learners, keys[k].set};
            int rc = config_load(&c, "configs/cartpole.yaml", sets, 4, err);
            if (reads) {
                cr_expect_eq(rc, 0, "%s with %s: %s", keys[k].set, mode, err);
                continue;
            }
            cr_expect_eq(rc, -1, "%s with %s was accepted", keys[k].set, mode);
            char key[40];
            snprintf(key, sizeof key, "%.*s", (int)strcspn(keys[k].set, "="), keys[k].set);
            char want[ERR_LEN];
            snprintf(want, sizeof want, "--set %s: %s: %s applies to sync.mode ", keys[k].set, key, key);
            cr_expect(strncmp(err, want, strlen(want)) == 0, "%s", err);
            snprintf(want, sizeof want, "only, but sync.mode is %s (from --set), which ignores it; ", modes[m].mode);
            cr_expect(strstr(err, want) != NULL, "%s", err);
            sets[3] = keys[k].dflt;
            cr_expect_eq(config_load(&c, "configs/cartpole.yaml", sets, 4, err), 0, "%s with %s: %s", keys[k].dflt,
                         mode, err);
        }
    }
}

typedef struct {
    const char *set, *want;
} SetCase;

Test(config_set, bad_overrides_give_exact_errors) {
    static const SetCase cases[] = {
        {"roles.lerners=2", "--set roles.lerners=2: roles.lerners: unknown key (did you mean \"roles.learners\"?)"},
        {"rnu.seed=4", "--set rnu.seed=4: rnu.seed: unknown key (did you mean \"run.seed\"?)"},
        {"seed=4", "--set seed=4: seed: unknown key (did you mean \"run.seed\" or \"eval.seed\"?)"},
        /* A section is not a key: never 'did you mean "run"' for run */
        {"run=5", "--set run=5: run: unknown key (\"run\" is a section, not a key: --set run.KEY=VALUE; valid keys: "
                  "name, out_dir, seed, mode, max_env_steps, max_updates, max_seconds, stop_deadline_seconds, "
                  "stop_when_solved, blas_threads, blas_kernel, wait, pin_cores)"},
        {"roles=2", "--set roles=2: roles: unknown key (\"roles\" is a section, not a key: --set roles.KEY=VALUE; "
                    "valid keys: actors, replay_shards, learners, param_servers)"},
        {"rolse=2", "--set rolse=2: rolse: unknown key (did you mean a key of section \"roles\"? --set "
                    "roles.KEY=VALUE; valid keys: actors, replay_shards, learners, param_servers)"},
        {"learners=2", "--set learners=2: learners: unknown key (did you mean \"roles.learners\"?)"},
        {"roles.bananas=4", "--set roles.bananas=4: roles.bananas: unknown key (valid keys: actors, "
                            "replay_shards, learners, param_servers)"},
        {"roles.actors", "--set roles.actors: expected KEY.PATH=VALUE, e.g. --set roles.actors=4"},
        {"=4", "--set =4: expected KEY.PATH=VALUE, e.g. --set roles.actors=4"},
        {"roles.actors=", "--set roles.actors=: roles.actors: expected a positive integer, got an empty value"},
        {"roles.actors=\"4\"",
         "--set roles.actors=\"4\": roles.actors: expected a positive integer, got the quoted string \"4\""},
        {"roles.actors=two", "--set roles.actors=two: roles.actors: expected a positive integer, got \"two\""},
        {"roles.actors=0", "--set roles.actors=0: roles.actors: expected an integer in [1, 1024], got 0"},
        {"network.hidden=[128,0]",
         "--set network.hidden=[128,0]: network.hidden[1]: expected an integer in [1, 4096], got 0"},
        {"network.hidden={a: 1}",
         "--set network.hidden={a: 1}: network.hidden: expected a list of 1 to 8 layer widths, got a mapping"},
        {"network.hidden=[1,", "--set network.hidden=[1,: network.hidden: invalid YAML: did not find expected node "
                               "content (while parsing a flow node)"},
        {"agent.gamma=.nan", "--set agent.gamma=.nan: agent.gamma: expected a finite number in [0, 1], got .nan"},
        {"run.seed=*x", "--set run.seed=*x: run.seed: anchors and aliases are not supported"},
        {"run.mode=locale", "--set run.mode=locale: run.mode: expected one of distributed, local, got \"locale\" "
                            "(did you mean \"local\"?)"},
        {"run.name=a\nb", "--set run.name=a\\nb: run.name: expected 1 to 63 characters from A-Z a-z 0-9 . _ -, "
                          "got \"a b\""},
        /* both keys come from defaults or overrides: no line:col */
        {"replay.batch_size=2000",
         "--set replay.batch_size=2000: replay.batch_size: replay.min_size (1000, the default) must be at least "
         "replay.batch_size (2000, from --set): learning cannot start before a batch can be sampled"},
        {"sync.mode=allreduce", "--set sync.mode=allreduce: sync.mode: sync.mode allreduce (from --set) uses no "
                                "parameter servers, but roles.param_servers is 1 (the default); set "
                                "roles.param_servers: 0"},
        {"env.torques=[-1,1]", "--set env.torques=[-1,1]: env.torques: only Pendulum-v1 takes env.torques, but "
                               "env.name is CartPole-v1 (the default)"},
    };
    char dir[] = "/tmp/gorila-cfg-XXXXXX", path[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/plain.yaml", dir);
    FILE *f = fopen(path, "w");
    fputs("run:\n  seed: 3\n", f); /* sets none of the keys the rules tie */
    fclose(f);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Config c;
        char err[ERR_LEN] = "";
        const char *sets[] = {"run.seed=4", cases[i].set};
        cr_expect_eq(config_load(&c, path, sets, 2, err), -1, "%s", cases[i].set);
        cr_expect_str_eq(err, cases[i].want, "%s", cases[i].set);
    }
    unlink(path);
    rmdir(dir);
}

/* An override that breaks a rule with a key of the file points at the file. */
Test(config_set, rule_broken_by_an_override_points_at_the_file_key) {
    char dir[] = "/tmp/gorila-cfg-XXXXXX", path[128], err[ERR_LEN], want[ERR_LEN];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/r.yaml", dir);
    FILE *f = fopen(path, "w");
    fputs("replay:\n  min_size: 1000\n", f);
    fclose(f);
    Config c;
    const char *sets[] = {"replay.batch_size=2000"};
    cr_assert_eq(config_load(&c, path, sets, 1, err), -1);
    snprintf(want, sizeof want,
             "%s:2:3: replay.min_size: replay.min_size (1000) must be at least replay.batch_size (2000, from "
             "--set): learning cannot start before a batch can be sampled",
             path);
    cr_assert_str_eq(err, want);
    /* An override can also repair the file: overrides come before validation. */
    f = fopen(path, "w");
    fputs("replay:\n  min_size: 10\n", f);
    fclose(f);
    const char *fix[] = {"replay.batch_size=10"};
    cr_assert_eq(config_load(&c, path, fix, 1, err), 0, "%s", err);
    unlink(path);
    rmdir(dir);
}

Test(config_set, config_set_on_a_loaded_config) {
    Config c;
    char err[ERR_LEN];
    cr_assert_eq(config_load(&c, "tests/fixtures/configs/set-base.yaml", NULL, 0, err), 0, "%s", err);
    cr_assert_eq(config_set(&c, "agent.gamma=0.95", err), 0, "%s", err);
    cr_assert_eq(c.agent.gamma, 0.95);
    cr_assert_eq(config_set(&c, "agent.gamma=2", err), -1);
    cr_assert_str_eq(err, "--set agent.gamma=2: agent.gamma: expected a number in [0, 1], got 2");
    /* The rule points at the key the file set (batch_size, line 6 of
     * set-base.yaml), and the message says the other came from --set. */
    cr_assert_eq(config_set(&c, "replay.min_size=100", err), -1);
    cr_assert_str_eq(err, "tests/fixtures/configs/set-base.yaml:6:3: replay.batch_size: replay.min_size (100, from --set) must be "
                          "at least replay.batch_size (512): learning cannot start before a batch can be sampled");
}

Test(config_set, too_many_overrides) {
    Config c;
    char err[ERR_LEN];
    const char *sets[CFG_MAX_SETS + 1];
    for (int i = 0; i <= CFG_MAX_SETS; i++) sets[i] = "run.seed=1";
    cr_assert_eq(config_load(&c, "configs/cartpole.yaml", sets, CFG_MAX_SETS, err), 0, "%s", err);
    cr_assert_eq(config_load(&c, "configs/cartpole.yaml", sets, CFG_MAX_SETS + 1, err), -1);
    cr_assert_str_eq(err, "expected at most 64 --set overrides, got 65");
}

/* env.sticky_actions and env.difficulty_ramping: MinAtar's, refused on
 * another environment unless at their defaults; env.reward_threshold:
 * auto (the env's, or none), none, or a number. */
Test(config_set, minatar_keys_and_reward_threshold) {
    Config c;
    char err[ERR_LEN];
    const char *cart_sticky[] = {"env.sticky_actions=0.25"};
    cr_assert_eq(config_load(&c, "configs/local/cartpole.yaml", cart_sticky, 1, err), -1);
    cr_expect(strstr(err, "only the MinAtar environments take env.sticky_actions, but env.name is CartPole-v1"), "%s",
              err);
    const char *cart_ramp[] = {"env.difficulty_ramping=false"};
    cr_assert_eq(config_load(&c, "configs/local/cartpole.yaml", cart_ramp, 1, err), -1);
    cr_expect(strstr(err, "only the MinAtar environments take env.difficulty_ramping"), "%s", err);
    const char *cart_default[] = {"env.sticky_actions=0.1", "env.difficulty_ramping=true"};
    cr_assert_eq(config_load(&c, "configs/local/cartpole.yaml", cart_default, 2, err), 0, "%s", err);
    cr_expect_eq(config_reward_threshold(&c), 475.0, "auto: CartPole-v1's registered threshold");
    cr_assert_eq(config_set(&c, "env.reward_threshold=none", err), 0, "%s", err);
    cr_expect(isnan(config_reward_threshold(&c)), "none");
    cr_assert_eq(config_set(&c, "env.reward_threshold=-12.5", err), 0, "%s", err);
    cr_expect_eq(config_reward_threshold(&c), -12.5);
    cr_assert_eq(config_set(&c, "env.reward_threshold=many", err), -1);
    cr_expect(strstr(err, "env.reward_threshold: expected auto (the environment's registered threshold, or none), "
                          "none, or a finite number, got \"many\""), "%s", err);
    cr_assert_eq(config_set(&c, "env.reward_threshold=inf", err), -1);
#ifdef GORILA_MINATAR
    const char *minatar[] = {"env.name=MinAtar/Breakout-v1", "env.sticky_actions=0", "env.difficulty_ramping=false"};
    cr_assert_eq(config_load(&c, "configs/local/cartpole.yaml", minatar, 3, err), 0, "%s", err);
    cr_expect_eq(c.env.sticky_actions, 0.0);
    cr_expect(!c.env.difficulty_ramping);
    cr_expect(isnan(config_reward_threshold(&c)), "auto: MinAtar registers no threshold");
    cr_assert_eq(config_set(&c, "env.reward_threshold=30", err), 0, "%s", err);
    cr_expect_eq(config_reward_threshold(&c), 30.0);
    cr_assert_eq(config_set(&c, "env.sticky_actions=1.5", err), -1);
    cr_assert_eq(config_set(&c, "env.torques=[-1, 1]", err), -1);
#endif
}

/* ---- validation of a Config built in code ---------------------------------------- */

Test(config_validate, catches_values_set_in_code) {
    Config c;
    char err[ERR_LEN];
    config_defaults(&c);
    c.agent.gamma = NAN;
    cr_assert_eq(config_validate(&c, err), -1);
    cr_assert_str_eq(err, "config: agent.gamma: expected a finite number in [0, 1], got nan");
    config_defaults(&c);
    c.network.n_hidden = 0;
    cr_assert_eq(config_validate(&c, err), -1);
    cr_assert_str_eq(err, "config: network.hidden: expected a list of 1 to 8 layer widths, got 0 of them");
    config_defaults(&c);
    c.env.torques[1] = 2.5;
    snprintf(c.env.name, sizeof c.env.name, "Pendulum-v1");
    cr_assert_eq(config_validate(&c, err), -1);
    cr_assert_str_eq(err, "config: env.torques[1]: expected a finite number in [-2, 2], got 2.5 (Pendulum-v1's "
                          "max_torque is 2; it would clip larger values)");
    config_defaults(&c);
    snprintf(c.env.name, sizeof c.env.name, "Pong");
    cr_assert_eq(config_validate(&c, err), -1);
    char want[ERR_LEN];
    expect_of("config: env.name: expected one of ", ENV_NAMES ", got \"Pong\"", want, sizeof want);
    cr_assert_str_eq(err, want);
    config_defaults(&c);
    c.env.torques[0] = -1; /* changed in code on a CartPole config */
    cr_assert_eq(config_validate(&c, err), -1);
    cr_assert_str_eq(err, "config: env.torques: only Pendulum-v1 takes env.torques, but env.name is CartPole-v1 "
                          "(the default)");
    config_defaults(&c);
    c.roles.actors = -1;
    cr_assert_eq(config_validate(&c, err), -1);
    cr_assert_str_eq(err, "config: roles.actors: expected an integer in [1, 1024], got -1");
    config_defaults(&c);
    c.explore.end = 1;
    c.explore.start = 0.5;
    cr_assert_eq(config_validate(&c, err), -1);
    /* Values changed in code are not called defaults. */
    cr_assert_str_eq(err, "config: explore.end: explore.end (1) must be at most explore.start (0.5)");
}

/* ---- bounds and the file system ------------------------------------------------- */

static void write_file(const char *path, const char *fill, size_t unit, size_t bytes) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (size_t n = 0; n < bytes; n += unit) fwrite(fill, 1, unit < bytes - n ? unit : bytes - n, f);
    fclose(f);
}

Test(config_limits, oversize_file_is_refused_before_reading) {
    char dir[] = "/tmp/gorila-cfg-XXXXXX", path[128], err[ERR_LEN], want[ERR_LEN];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    write_file(path, "# padding line\n", 15, CFG_MAX_FILE_BYTES + 1);
    Config c;
    cr_assert_eq(config_load(&c, path, NULL, 0, err), -1);
    snprintf(want, sizeof want, "%s: expected a config of at most 1048576 bytes, got 1048577 bytes", path);
    cr_assert_str_eq(err, want);
    unlink(path);
    rmdir(dir);

    char *big = calloc(CFG_MAX_FILE_BYTES + 1, 1);
    cr_assert_eq(config_load_string(&c, "big.yaml", big, CFG_MAX_FILE_BYTES + 1, err), -1);
    cr_assert_str_eq(err, "big.yaml: expected a config of at most 1048576 bytes, got 1048577 bytes");
    free(big);
}

/* libyaml's scanner is quadratic in the nesting depth; these must fail fast. */
Test(config_limits, a_mebibyte_of_nesting_is_refused_promptly) {
    char dir[] = "/tmp/gorila-cfg-XXXXXX", path[128], err[ERR_LEN], want[ERR_LEN];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/brackets.yaml", dir);
    write_file(path, "[", 1, CFG_MAX_FILE_BYTES);
    Config c;
    double t0 = now_seconds();
    cr_assert_eq(config_load(&c, path, NULL, 0, err), -1);
    snprintf(want, sizeof want, "%s:1:17: expected at most 16 levels of nesting, found more", path);
    cr_assert_str_eq(err, want);

    write_file(path, "{a: ", 4, CFG_MAX_FILE_BYTES);
    cr_assert_eq(config_load(&c, path, NULL, 0, err), -1);
    snprintf(want, sizeof want, "%s:1:65: expected at most 16 levels of nesting, found more", path);
    cr_assert_str_eq(err, want);

    FILE *f = fopen(path, "w");
    size_t bytes = 0;
    for (int d = 0; bytes + (size_t)d + 3 <= CFG_MAX_FILE_BYTES; d++) {
        fprintf(f, "%*sa:\n", d, "");
        bytes += (size_t)d + 3;
    }
    fclose(f);
    cr_assert_eq(config_load(&c, path, NULL, 0, err), -1);
    snprintf(want, sizeof want, "%s:17:17: expected at most 16 levels of nesting, found more", path);
    cr_assert_str_eq(err, want);

    write_file(path, "- ", 2, CFG_MAX_FILE_BYTES);
    cr_assert_eq(config_load(&c, path, NULL, 0, err), -1);
    snprintf(want, sizeof want, "%s:1:33: expected at most 16 levels of nesting, found more", path);
    cr_assert_str_eq(err, want);
    double dt = now_seconds() - t0;
    cr_assert_lt(dt, 2.0, "took %.2f s", dt);
    unlink(path);
    rmdir(dir);
}

Test(config_limits, too_many_nodes) {
    Config c;
    char err[ERR_LEN];
    size_t n = 3 * 10001 + 32;
    char *text = malloc(n);
    size_t o = (size_t)sprintf(text, "network:\n  hidden: [");
    for (int i = 0; i < 10001; i++) o += (size_t)sprintf(text + o, "1,");
    text[o++] = ']';
    cr_assert_eq(config_load_string(&c, "n.yaml", text, o, err), -1);
    /* 5 nodes before the list, so element 9996 is node 10001; elements
     * start at column 12 and take 2 columns each: 12 + 2 * 9995. */
    cr_assert_str_eq(err, "n.yaml:2:20002: expected at most 10000 YAML nodes, found more (a full config has a "
                          "few hundred)");
    free(text);
}

Test(config_limits, missing_directory_and_unreadable_files) {
    Config c;
    char err[ERR_LEN];
    cr_assert_eq(config_load(&c, "tests/fixtures/bad_configs/no-such-file.yaml", NULL, 0, err), -1);
    cr_assert_str_eq(err, "tests/fixtures/bad_configs/no-such-file.yaml: cannot open config: No such file or directory");
    cr_assert_eq(config_load(&c, "tests/fixtures/bad_configs", NULL, 0, err), -1);
    cr_assert_str_eq(err, "tests/fixtures/bad_configs: expected a YAML file, got a directory");
    cr_assert_eq(config_load(&c, "configs/cartpole.yaml/x", NULL, 0, err), -1);
    cr_assert_str_eq(err, "configs/cartpole.yaml/x: cannot open config: Not a directory");
    cr_assert_eq(config_load(&c, "/dev/null", NULL, 0, err), -1);
    cr_assert_str_eq(err, "/dev/null: expected a regular YAML file, got a device");
    cr_assert_eq(config_load(&c, "/dev/zero", NULL, 0, err), -1); /* would never end */
    cr_assert_str_eq(err, "/dev/zero: expected a regular YAML file, got a device");

    if (geteuid() == 0) return; /* root reads files whatever their mode */
    char dir[] = "/tmp/gorila-cfg-XXXXXX", path[128], want[ERR_LEN];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/secret.yaml", dir);
    write_file(path, "{}", 2, 2);
    chmod(path, 0);
    cr_assert_eq(config_load(&c, path, NULL, 0, err), -1);
    snprintf(want, sizeof want, "%s: cannot open config: Permission denied", path);
    cr_assert_str_eq(err, want);
    unlink(path);
    rmdir(dir);
}

/* ---- network.conv, optimizer.rmsprop_eps, explore.start_step -------------- */

static int load_text(Config *c, const char *text, char *err) {
    return config_load_string(c, "t.yaml", text, strlen(text), err);
}

Test(config_conv, block_and_flow_lists_of_layers_load_and_round_trip) {
    Config c;
    char err[ERR_LEN];
    config_defaults(&c);
    cr_expect_eq(c.network.n_conv, 0, "no conv layer by default");
    cr_expect_eq(c.optimizer.rmsprop_eps, RMSPROP_EPS_INSIDE);
    cr_expect_eq(c.explore.start_step, 0);
    const char block[] = "env: {name: MinAtar/Breakout-v0}\n"
                         "network:\n"
                         "  conv:\n"
                         "    - filters: 16\n"
                         "      kernel: 3\n"
                         "      stride: 1\n"
                         "    - {stride: 2, kernel: 2, filters: 8}\n"
                         "optimizer: {kind: rmsprop, rmsprop_eps: outside}\n"
                         "explore: {start_step: 5000}\n";
    cr_assert_eq(load_text(&c, block, err), 0, "%s", err);
    cr_expect_eq(c.network.n_conv, 2);
    cr_expect(c.network.conv[0].filters == 16 && c.network.conv[0].kernel == 3 && c.network.conv[0].stride == 1);
    cr_expect(c.network.conv[1].filters == 8 && c.network.conv[1].kernel == 2 && c.network.conv[1].stride == 2);
    cr_expect_eq(c.optimizer.rmsprop_eps, RMSPROP_EPS_OUTSIDE);
    cr_expect_eq(c.explore.start_step, 5000);
    round_trip(&c);
    /* [] is none, and a --set replaces the list. */
    cr_assert_eq(config_set(&c, "network.conv=[]", err), 0, "%s", err);
    cr_expect_eq(c.network.n_conv, 0);
    cr_assert_eq(config_set(&c, "network.conv=[{filters: 4, kernel: 5, stride: 5}]", err), 0, "%s", err);
    cr_expect(c.network.n_conv == 1 && c.network.conv[0].stride == 5);
    Config d = c;
    d.network.conv[0].stride = 4;
    cr_expect_not(config_same(&c, &d));
}

Test(config_conv, bad_layers_and_misplaced_keys_give_exact_errors) {
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"network: {conv: 16}\n", "t.yaml:1:17: network.conv: expected a list of 0 to 4 conv layers {filters: F, "
                                  "kernel: K, stride: S}, got \"16\""},
        {"network: {conv: [[16, 3, 1]]}\n", "t.yaml:1:18: network.conv[0]: expected a mapping {filters: F, kernel: K, "
                                            "stride: S}, got a list"},
        {"network: {conv: [{filters: 16, kernel: 3}]}\n",
         "t.yaml:1:18: network.conv[0]: missing stride in a conv layer (expected {filters: F, kernel: K, stride: S})"},
        {"network: {conv: [{filters: 16, kernel: 3, stride: 1, pad: 1}]}\n",
         "t.yaml:1:54: network.conv[0]: unknown key \"pad\" in a conv layer (expected filters, kernel and stride, once "
         "each)"},
        {"env: {name: MinAtar/Breakout-v0}\nnetwork: {conv: [{filters: 16, kernel: 3, stride: 0}]}\n",
         "t.yaml:2:51: network.conv[0].stride: expected an integer in [1, 64], got 0"},
        {"env: {name: MinAtar/Breakout-v0}\nnetwork: {conv: [{filters: 16, kernel: 11, stride: 1}]}\n",
         "t.yaml:2:11: network.conv: conv layer 0: kernel 11 does not fit the 10x10 input (expected 1 to 10) "
         "(env.name MinAtar/Breakout-v0: 10x10x4 planes)"},
        {"network: {conv: [{filters: 16, kernel: 3, stride: 1}]}\n",
         "t.yaml:1:11: network.conv: a conv network on a vector environment: env.name CartPole-v1 (the default) "
         "gives 4 numbers, not planes; remove network.conv or use a MinAtar environment"},
        {"optimizer: {rmsprop_eps: outside}\n",
         "t.yaml:1:13: optimizer.rmsprop_eps: optimizer.rmsprop_eps applies to optimizer.kind rmsprop only, but "
         "optimizer.kind is adam (the default), which ignores it; set optimizer.kind: rmsprop, or remove "
         "optimizer.rmsprop_eps"},
        {"optimizer: {rmsprop_eps: both}\n",
         "t.yaml:1:26: optimizer.rmsprop_eps: expected one of inside, outside, got \"both\""},
        {"explore: {kind: apex, start_step: 10}\n",
         "t.yaml:1:23: explore.start_step: explore.start_step delays the linear decay, but explore.kind is apex "
         "(constant per-actor rates), which ignores it; set explore.kind: linear, or remove explore.start_step"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Config c;
        char err[ERR_LEN] = "";
        cr_expect_eq(load_text(&c, cases[i].text, err), -1, "%s", cases[i].text);
        cr_expect_str_eq(err, cases[i].want, "%s", cases[i].text);
    }
    /* At their defaults the misplaced keys are accepted (an effective
     * config.yaml lists every key). */
    Config c;
    char err[ERR_LEN];
    cr_expect_eq(load_text(&c, "optimizer: {rmsprop_eps: inside}\nexplore: {kind: apex, start_step: 0}\n"
                                "network: {conv: []}\n", err), 0, "%s", err);
}

/* ---- env.kwargs: a mapping, or its JSON text ---------------------------------- */

/* Load "env: {name: python:m:f, kwargs: KWARGS}" (KWARGS may span lines,
 * indented under kwargs:), or fail with err. */
static int load_kwargs(Config *c, const char *kwargs, char *err) {
    char text[4096];
    snprintf(text, sizeof text, "run: {mode: local}\nenv:\n  name: python:m:f\n  kwargs: %s\n", kwargs);
    return config_load_string(c, "t.yaml", text, strlen(text), err);
}

Test(config_kwargs, block_and_flow_mappings_give_the_same_compact_json) {
    Config c;
    char err[ERR_LEN];
    cr_assert_eq(load_kwargs(&c, "\n    max_steps: 200\n    name: x\n", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"max_steps\":200,\"name\":\"x\"}");
    round_trip(&c);
    cr_assert_eq(load_kwargs(&c, "{max_steps: 200,   name: x}", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"max_steps\":200,\"name\":\"x\"}");
    cr_assert_eq(load_kwargs(&c, "{\"max_steps\": 200, 'name': \"x\"}", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"max_steps\":200,\"name\":\"x\"}", "quoted keys are the same keys");
    cr_assert_eq(load_kwargs(&c, "{}", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{}");
    /* Keys stay in the order written. */
    cr_assert_eq(load_kwargs(&c, "{b: 1, a: 2}", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"b\":1,\"a\":2}");
}

Test(config_kwargs, nested_mappings_and_lists) {
    Config c;
    char err[ERR_LEN];
    cr_assert_eq(load_kwargs(&c, "\n    grid: {size: [5, 7], walls: [[0, 1], [2, 3]]}\n    layers:\n"
                                 "      - {kind: a, opts: {}}\n      - []\n", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"grid\":{\"size\":[5,7],\"walls\":[[0,1],[2,3]]},"
                                   "\"layers\":[{\"kind\":\"a\",\"opts\":{}},[]]}");
    round_trip(&c);
}

/* Plain scalars as the loader types them (YAML 1.2's core schema,
 * strictly); quoted and block scalars are strings, escaped for JSON. */
Test(config_kwargs, scalars_numbers_booleans_null_and_strings) {
    Config c;
    char err[ERR_LEN];
    cr_assert_eq(load_kwargs(&c, "{i: [0, -0, +3, 12345678901234567890123], "
                                 "f: [1.0, -2.50, 1e3, .5, 5., 1E-3, 0.1, -0.0, 1e20],"
                                 "b: [true, false], n: [null, ~, Null, NULL], e: , "
                                 "s: [yes, True, 0x1F, 1_000, hello world, \"5\", 'true', \"null\"]}", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"i\":[0,-0,3,12345678901234567890123],"
                                   "\"f\":[1.0,-2.5,1000.0,0.5,5.0,0.001,0.1,-0.0,1e+20],"
                                   "\"b\":[true,false],\"n\":[null,null,null,null],\"e\":null,"
                                   "\"s\":[\"yes\",\"True\",\"0x1F\",\"1_000\",\"hello world\",\"5\",\"true\",\"null\"]}");
    /* Quotes, backslashes, control characters (double-quoted escapes, NUL
     * too), and UTF-8 as it is; a block scalar keeps its line break. */
    cr_assert_eq(load_kwargs(&c, "\n    q: \"say \\\"hi\\\" C:\\\\dir\"\n    c: \"a\\tb\\nc\\rd\\0e\\x01f\\x1fg\"\n"
                                 "    u: \"\\u00e9\\u2028\xe2\x82\xac\"\n    'key \"k\"': 's''q'\n"
                                 "    blk: |\n      two\n      lines\n", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"q\":\"say \\\"hi\\\" C:\\\\dir\",\"c\":\"a\\tb\\nc\\rd\\u0000e\\u0001f\\u001fg\","
                                   "\"u\":\"\xc3\xa9\xe2\x80\xa8\xe2\x82\xac\",\"key \\\"k\\\"\":\"s'q\","
                                   "\"blk\":\"two\\nlines\\n\"}");
    round_trip(&c);
}

/* The string form is stored as written, spaces and all. */
Test(config_kwargs, the_string_form_is_unchanged) {
    Config c;
    char err[ERR_LEN];
    cr_assert_eq(load_kwargs(&c, "'{\"max_steps\":  200 }'", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"max_steps\":  200 }");
    cr_assert_eq(config_set(&c, "env.kwargs=\"{\\\"n\\\": 5}\"", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"n\": 5}");
    cr_assert_eq(load_kwargs(&c, "'[1]'", err), -1);
    cr_expect_str_eq(err, "t.yaml:4:11: env.kwargs: expected a JSON object of keyword arguments, e.g. "
                          "'{\"length\": 200}', got \"[1]\"");
}

Test(config_kwargs, a_mapping_by_set) {
    Config c;
    char err[ERR_LEN];
    cr_assert_eq(load_kwargs(&c, "{a: 1}", err), 0, "%s", err);
    cr_assert_eq(config_set(&c, "env.kwargs={\"n\": 5, m: [x, 2]}", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{\"n\":5,\"m\":[\"x\",2]}");
    cr_assert_eq(config_set(&c, "env.kwargs={}", err), 0, "%s", err);
    cr_expect_str_eq(c.env.kwargs, "{}");
    cr_assert_eq(config_set(&c, "env.kwargs={a: .nan}", err), -1);
    cr_expect_str_eq(err, "--set env.kwargs={a: .nan}: env.kwargs.a: expected a finite number (JSON has no infinity "
                          "or NaN), got .nan; quote it for the string");
    /* Still only for a Python environment. */
    Config d;
    const char *sets[] = {"env.kwargs={size: 5}"};
    cr_assert_eq(config_load(&d, "configs/local/cartpole.yaml", sets, 1, err), -1);
    cr_expect(strstr(err, "only a Python environment (python:MODULE:CALLABLE or gymnasium:ID) takes env.kwargs"),
              "%s", err);
}

/* At most 1023 bytes of JSON text, either form; a longer string is refused
 * before it is copied (it once overran the buffer). */
Test(config_kwargs, too_long) {
    Config c;
    char err[ERR_LEN], kw[2100], xs[2001];
    memset(xs, 'x', sizeof xs - 1);
    xs[sizeof xs - 1] = '\0';
    snprintf(kw, sizeof kw, "{a: %.*s}", 1015, xs); /* {"a":"x..."}: 8 + 1015 bytes */
    cr_assert_eq(load_kwargs(&c, kw, err), 0, "%s", err);
    cr_expect_eq(strlen(c.env.kwargs), 1023);
    snprintf(kw, sizeof kw, "{a: %.*s}", 1016, xs);
    cr_assert_eq(load_kwargs(&c, kw, err), -1);
    cr_expect_str_eq(err, "t.yaml:4:11: env.kwargs: expected a mapping of at most 1023 bytes as JSON text, got 1024 "
                          "bytes (\"{\\\"a\\\":\\\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\")");
    snprintf(kw, sizeof kw, "'{\"a\": \"%s\"}'", xs);
    cr_assert_eq(load_kwargs(&c, kw, err), -1);
    cr_expect_str_eq(err, "t.yaml:4:11: env.kwargs: expected a string of at most 1023 bytes, got 2009 bytes");
}

/* config_write escapes non-ASCII text: a full env.kwargs of two-byte
 * characters (U+0101, \u0101 in YAML: 3 bytes out per byte in) still
 * round-trips whole. */
Test(config_kwargs, a_full_kwargs_of_non_ascii_text_round_trips) {
    Config c;
    char err[ERR_LEN], kw[1100] = "{a: \"";
    for (int i = 0; i < 505; i++) strcat(kw, "\xc4\x81");
    strcat(kw, "\"}");
    cr_assert_eq(load_kwargs(&c, kw, err), 0, "%s", err);
    cr_expect_eq(strlen(c.env.kwargs), 1018);
    round_trip(&c);
}

Test(config_kwargs, bad_mappings_give_exact_errors) {
    static const struct {
        const char *kwargs, *want;
    } cases[] = {
        {"[1, 2]", "t.yaml:4:11: env.kwargs: expected a mapping or its JSON text, got a list"},
        {"~", "t.yaml:4:11: env.kwargs: expected a mapping or its JSON text, got ~ (null)"},
        {"{a: 1, b: {c: .inf}}", "t.yaml:4:25: env.kwargs.b.c: expected a finite number (JSON has no infinity or "
                                 "NaN), got .inf; quote it for the string"},
        {"{a: [1, 1e999]}", "t.yaml:4:19: env.kwargs.a[1]: expected a finite number, got 1e999 (too large for a "
                            "double)"},
        {"{a: 1e-999}", "t.yaml:4:15: env.kwargs.a: expected a number, got 1e-999 (too small for a double)"},
        {"\n    a: 1\n    b: 2\n    'a': 3", "t.yaml:7:5: env.kwargs.a: duplicate key (first defined at line 5)"},
        {"{[1]: 2}", "t.yaml:4:12: env.kwargs: expected a string key, got a list"},
        {"{x: {~: 2}}", "t.yaml:4:16: env.kwargs.x: expected a string key, got ~ (null)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Config c;
        char err[ERR_LEN] = "";
        cr_expect_eq(load_kwargs(&c, cases[i].kwargs, err), -1, "%s", cases[i].kwargs);
        cr_expect_str_eq(err, cases[i].want, "%s", cases[i].kwargs);
    }
}
