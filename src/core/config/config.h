/* SPDX-License-Identifier: MIT */
/* config.h: the one typed configuration of a gorila run.
 *
 * config.c and its parts (configint.h; configyaml.c is the only file that
 * includes libyaml) fill a Config from a YAML file plus `--set key.path=value` overrides, starting from config_defaults()
 * so that every field has a default, and validates every value and every
 * combination. All of the YAML keys are listed in docs/CONFIG.md; each
 * struct member below names its key.
 *
 * Errors are one line in the style
 *   configs/x.yaml:12:5: roles.learners: expected a positive integer, got "two"
 * (file, 1-based line and column, key path, what was expected, what was
 * found). Overrides report "--set <path>=<value>" in place of file:line:col.
 */
#ifndef GORILA_CONFIG_H
#define GORILA_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "util.h"

#define CFG_NAME_LEN 64
#define CFG_ENV_NAME_LEN 256      /* env.name: room for python:MODULE:CALLABLE */
#define CFG_KWARGS_LEN 1024       /* env.kwargs: a JSON object's text */
#define CFG_OUT_DIR_MAX (PATH_LEN - 257) /* bytes of run.out_dir: room left for the run name
                                           and the files below it */
#define CFG_MAX_LAYERS 8          /* hidden layers */
#define CFG_MAX_HIDDEN 4096       /* units per hidden layer */
#define CFG_MAX_CONV 4            /* network.conv layers (QNET_MAX_CONV) */
#define CFG_MAX_FILTERS 1024      /* filters per conv layer */
#define CFG_MAX_KERNEL 64         /* conv kernel side, stride */
#define CFG_MAX_TORQUES 32        /* Pendulum discrete torque set */
#define LEARNER_MAX_PREFETCH 8    /* learner.prefetch: sample requests in flight per learner */
#define LEARNER_MAX_ACCUMULATE 1024 /* learner.accumulate: mini-batch gradients per sync */
#define CFG_MAX_FILE_BYTES (1 << 20)
#define CFG_MAX_DEPTH 16          /* YAML nesting depth */
#define CFG_MAX_SETS 64           /* --set arguments */
#define CFG_MAX_KEYS 112          /* room in Config.origin for every schema key */

typedef enum { RUN_DISTRIBUTED = 0, RUN_LOCAL } RunMode;
typedef enum {
    SYNC_PS_SYNC = 0, SYNC_PS_ASYNC, SYNC_PS_BOUNDED, SYNC_ALLREDUCE,
    SYNC_GOSSIP, SYNC_EASGD, SYNC_LOCAL_SGD /* decentralized: each learner steps its own copy */
} SyncMode;
typedef enum { GOSSIP_RANDOM = 0, GOSSIP_RING, GOSSIP_HYPERCUBE } GossipTopology;
typedef enum { REPLAY_UNIFORM = 0, REPLAY_PRIORITIZED } ReplayKind;
typedef enum { PRIORITY_ACTOR = 0, PRIORITY_MAX } InitialPriority;
typedef enum { OPT_ADAM = 0, OPT_RMSPROP, OPT_SGD } CfgOptim;
typedef enum { RMSPROP_EPS_INSIDE = 0, RMSPROP_EPS_OUTSIDE } RmspropEps;
typedef enum { TARGET_HARD = 0, TARGET_SOFT } TargetKind;
typedef enum { EXPLORE_LINEAR = 0, EXPLORE_APEX } ExploreKind;
typedef enum { PROGRESS_AUTO = 0, PROGRESS_ALWAYS, PROGRESS_NEVER } ProgressMode;
typedef enum { ALLREDUCE_RING = 0, ALLREDUCE_NAIVE, ALLREDUCE_MPI, ALLREDUCE_HIERARCHICAL } AllreduceImpl;
typedef enum { WAIT_AUTO = 0, WAIT_POLL, WAIT_SLEEP } WaitMode;
/* run.pin_cores: false | true | auto (pin unless the environment is a
 * Python one, whose actors are better left to the kernel's balancing) */
typedef enum { PIN_FALSE = 0, PIN_TRUE, PIN_AUTO } PinMode;
typedef enum { LR_SCALING_NONE = 0, LR_SCALING_LINEAR, LR_SCALING_SQRT } LrScaling;
typedef enum { LEARNER_BATCH_PER_LEARNER = 0, LEARNER_BATCH_GLOBAL } LearnerBatch;

/* Where a key's value came from: bookkeeping for error messages, so that a
 * check of two keys can point at the one the file set. */
typedef enum { CFG_FROM_DEFAULT = 0, CFG_FROM_FILE, CFG_FROM_SET } ConfigFrom;
typedef struct {
    ConfigFrom from;
    int line, col;                 /* FILE: 1-based position of the key; SET: line = which
                                      override (from 1) in the call that applied it */
} ConfigOrigin;

/* One layer of network.conv: {filters: F, kernel: K, stride: S}. */
typedef struct {
    int filters, kernel, stride;
} CfgConv;

typedef struct {
    struct {
        char name[CFG_NAME_LEN];   /* run.name: run directory is <out_dir>/<name> */
        char out_dir[PATH_LEN];/* run.out_dir, default "runs" */
        uint64_t seed;             /* run.seed */
        RunMode mode;              /* run.mode: distributed | local */
        uint64_t max_env_steps;    /* run.max_env_steps: budget of transitions; 0 = none */
        uint64_t max_updates;      /* run.max_updates: 0 = none */
        double max_seconds;        /* run.max_seconds: wall-time limit; 0 = none */
        double stop_deadline_seconds; /* run.stop_deadline_seconds: how long the coordinator waits for
                                         each step of a stop before it ends the job (exit 6) */
        bool stop_when_solved;     /* run.stop_when_solved */
        int blas_threads;          /* run.blas_threads: OpenBLAS threads per rank, default 1 */
        char blas_kernel[CFG_NAME_LEN]; /* run.blas_kernel: "auto" (OpenBLAS's choice, or
                                           OPENBLAS_CORETYPE), or a kernel every rank must run
                                           (platform.h; docs/REPRODUCIBILITY.md) */
        WaitMode wait;             /* run.wait: auto | poll | sleep (how a rank waits for messages) */
        PinMode pin_cores;         /* run.pin_cores: on a node with more ranks than cores, pin the
                                      ranks that talk most to the same core (job.c); auto: not
                                      for a Python environment */
    } run;
    struct {
        char name[CFG_ENV_NAME_LEN]; /* env.name: CartPole-v1, MountainCar-v0, Acrobot-v1, Pendulum-v1,
                                      MinAtar/<Game>-v0|-v1 (gorila env list), or a Python
                                      environment: python:MODULE:CALLABLE, gymnasium:ID */
        char kwargs[CFG_KWARGS_LEN]; /* env.kwargs: a JSON object, the keyword arguments of a
                                      Python environment's callable; "{}" = none (a YAML
                                      mapping is stored here as its compact JSON text) */
        int max_episode_steps;     /* env.max_episode_steps: 0 = the env's own limit (MinAtar: none) */
        char reward_threshold[CFG_NAME_LEN]; /* env.reward_threshold: "auto" (the env's registered
                                      threshold, or none), "none", or a finite number as text;
                                      config_reward_threshold reads it */
        int n_torques;             /* env.torques: Pendulum-v1 only, default [-2, 0, 2] */
        double torques[CFG_MAX_TORQUES];
        double sticky_actions;     /* env.sticky_actions: MinAtar only, in [0, 1], default 0.1 */
        bool difficulty_ramping;   /* env.difficulty_ramping: MinAtar only, default true */
    } env;
    struct {
        int actors;                /* roles.actors */
        int replay_shards;         /* roles.replay_shards */
        int learners;              /* roles.learners */
        int param_servers;         /* roles.param_servers (0 with sync.mode allreduce) */
    } roles;
    struct {
        SyncMode mode;             /* sync.mode: ps_sync | ps_async | ps_bounded | allreduce |
                                      gossip | easgd | local_sgd */
        int staleness;             /* sync.staleness: ps_bounded drop bound, in versions */
        int learner_pull_every;    /* sync.learner_pull_every: updates between parameter pulls */
        AllreduceImpl allreduce_impl; /* sync.allreduce_impl: ring (gorila's) | naive (gorila's,
                                         via learner 0) | mpi (MPI_Allreduce) | hierarchical
                                         (shared memory within a node, the ring between nodes) */
        LrScaling lr_scaling;      /* sync.lr_scaling: none | linear | sqrt (ps_sync, allreduce) */
        int lr_warmup_updates;     /* sync.lr_warmup_updates: ramp to the scaled rate over these */
        int gossip_every;          /* sync.gossip_every: gossip, updates between exchanges with a peer */
        GossipTopology gossip_topology; /* sync.gossip_topology: random | ring | hypercube */
        int easgd_every;           /* sync.easgd_every: easgd, updates between exchanges with the center */
        double easgd_alpha;        /* sync.easgd_alpha: easgd's elastic force, in (0, 1) */
        int average_every;         /* sync.average_every: local_sgd, updates between model averages */
    } sync;
    struct {
        LearnerBatch batch;        /* learner.batch: per_learner (each learner its own replay.batch_size) |
                                      global (L learners split one replay.batch_size: the 1-learner update) */
        double loss_outlier_sigma; /* learner.loss_outlier_sigma: drop a gradient whose loss is this many
                                      standard deviations above the running mean (0: off; lossguard.h) */
        int prefetch;              /* learner.prefetch: sample requests a learner keeps in flight (1 to
                                      LEARNER_MAX_PREFETCH; above 1 uniform replay only) */
        int accumulate;            /* learner.accumulate: mini-batch gradients per sync; their mean is clipped
                                      and sent (1 to LEARNER_MAX_ACCUMULATE; 1: every batch syncs) */
    } learner;
    struct {
        int envs;                  /* actor.envs: environments stepped in lockstep per actor */
        int pull_every;            /* actor.pull_every: env steps (per actor) between pulls */
        int chunk;                 /* actor.chunk: transitions per message to replay */
    } actor;
    struct {
        ReplayKind kind;           /* replay.kind: uniform | prioritized (Ape-X) */
        uint64_t capacity;         /* replay.capacity: transitions, over all shards */
        int batch_size;            /* replay.batch_size */
        uint64_t min_size;         /* replay.min_size: transitions stored before learning */
        double samples_per_insert; /* replay.samples_per_insert: 0 = derived from agent.train_every,
                                      agent.gradient_steps and batch_size */
        double spi_tolerance;      /* replay.spi_tolerance: relative slack of the limiter */
        /* prioritized only (refused with uniform when set): */
        double alpha;              /* replay.alpha: priority exponent, p = (|td| + eps)^alpha */
        double beta, beta_final;   /* replay.beta -> replay.beta_final: importance-weight exponent */
        uint64_t beta_steps;       /* replay.beta_steps: updates over which beta anneals (0: beta_final at once) */
        double priority_eps;       /* replay.priority_eps: eps of the priority (> 0) */
        InitialPriority initial_priority; /* replay.initial_priority: actor | max */
    } replay;
    struct {
        int n_hidden;              /* network.hidden: list of layer widths */
        int hidden[CFG_MAX_LAYERS];
        bool dueling;              /* network.dueling */
        int n_conv;                /* network.conv: conv layers before hidden (planes envs only); 0 = none */
        CfgConv conv[CFG_MAX_CONV];
    } network;
    struct {
        double gamma;              /* agent.gamma */
        int n_step;                /* agent.n_step */
        bool double_dqn;           /* agent.double_dqn */
        double huber_delta;        /* agent.huber_delta */
        int train_every;           /* agent.train_every: env steps between training rounds */
        int gradient_steps;        /* agent.gradient_steps: updates per training round */
        TargetKind target_update;  /* agent.target_update: hard | soft */
        int target_every;          /* agent.target_every: updates between hard copies */
        double tau;                /* agent.tau: soft update rate */
    } agent;
    struct {
        CfgOptim kind;             /* optimizer.kind: adam | rmsprop | sgd */
        double lr;                 /* optimizer.lr */
        double beta1, beta2;       /* optimizer.beta1, optimizer.beta2 (adam) */
        double eps;                /* optimizer.eps (adam, rmsprop) */
        double decay;              /* optimizer.decay (rmsprop) */
        bool centered;             /* optimizer.centered (rmsprop) */
        RmspropEps rmsprop_eps;    /* optimizer.rmsprop_eps: inside (g / sqrt(var + eps)) | outside
                                      (PyTorch's g / (sqrt(var) + eps)); rmsprop only */
        double momentum;           /* optimizer.momentum (sgd, rmsprop) */
        double grad_clip;          /* optimizer.grad_clip: global-norm clip; 0 = off */
    } optimizer;
    struct {
        ExploreKind kind;          /* explore.kind: linear | apex */
        double start, end;         /* explore.start, explore.end (linear) */
        uint64_t decay_steps;      /* explore.decay_steps: env steps from start to end */
        uint64_t start_step;       /* explore.start_step: env steps at start before the decay begins */
        double apex_eps;           /* explore.apex_eps: eps of Ape-X per-actor rates */
        double apex_alpha;         /* explore.apex_alpha */
    } explore;
    struct {
        uint64_t every_updates;    /* eval.every_updates: 0 = only at the end */
        int episodes;              /* eval.episodes */
        uint64_t seed;             /* eval.seed: seeds the separate eval environments */
        int test_episodes;         /* eval.test_episodes: held-out test episodes at the end (0: none) */
        uint64_t test_seed;        /* eval.test_seed: seeds them; never eval.seed (heldout.h) */
    } eval;
    struct {
        double every_seconds;      /* checkpoint.every_seconds: 0 = off */
        uint64_t every_updates;    /* checkpoint.every_updates: 0 = off */
        int keep;                  /* checkpoint.keep: newest checkpoints kept */
        int keep_abandoned;        /* checkpoint.keep_abandoned: abandoned-ckpt-* directories kept */
        bool save_replay;          /* checkpoint.save_replay */
    } checkpoint;
    struct {
        double interval_seconds;   /* logging.interval_seconds: longest time between metrics rows */
        uint64_t metrics_every_env_steps; /* logging.metrics_every_env_steps: a row at each multiple; 0 = off */
        uint64_t metrics_every_updates;   /* logging.metrics_every_updates: a row at each multiple; 0 = off */
        ProgressMode progress;     /* logging.progress: auto | always | never */
        bool trace;                /* logging.trace: write trace.json (Chrome trace format) */
        int trace_events;          /* logging.trace_events: events kept per rank (the newest) */
        bool tensorboard;          /* logging.tensorboard: TensorBoard event files in <run>/tb/ */
    } logging;
    char source[PATH_LEN];     /* file the config came from (not a key) */
    /* Not a key: the spec of a Python environment (env.name python:... or
     * gymnasium:...), set by whoever resolved it (the command, through the
     * bridge, src/pyenv) and owned by it; NULL otherwise. config_env reads
     * it. */
    const struct EnvSpec *env_spec;
    /* Private to the loader, not settings: origin[i] tells where the value
     * of key i of its key table (configkeys.c) came from. */
    ConfigOrigin origin[CFG_MAX_KEYS];
} Config;

/* The environment of cfg: the resolved Python spec (cfg->env_spec), or
 * the registry's (env_find), or NULL (an external id not yet resolved, or
 * an unknown name). */
const struct EnvSpec *config_env(const Config *cfg);

/* Fill *cfg with the default of every field. */
void config_defaults(Config *cfg);

/* Load path, then apply the n_sets "key.path=value" overrides, then
 * validate. Returns 0, or -1 with one line in err (see the top of this file).
 * cfg is fully written in both cases. */
int config_load(Config *cfg, const char *path, const char *const *sets, int n_sets, char *err);

/* Parse YAML text held in memory (name is used in messages), no overrides.
 * Same contract as config_load. */
int config_load_string(Config *cfg, const char *name, const char *text, size_t len, char *err);

/* Apply one "key.path=value" override to an already loaded config and
 * re-validate. Returns 0 or -1 with err. */
int config_set(Config *cfg, const char *assignment, char *err);

/* Check every value and combination. Returns 0 or -1 with err. */
int config_validate(const Config *cfg, char *err);

/* The name of the run directory a new run of cfg makes under run.out_dir
 * (runlog adds -2, -3, ... on a clash): run.name when the file or a --set
 * gave it, else <run.name>-<mode>-l<learners>-s<seed>, run.name then being
 * the file's stem, mode "local" for run.mode local and sync.mode's name for
 * a distributed run, learners 1 for a local run and roles.learners for a
 * distributed one: configs/cartpole.yaml gives cartpole-ps_sync-l1-s1. */
void config_run_dir_name(const Config *cfg, char *out, size_t cap);

/* Write the effective config as YAML that config_load accepts back. */
void config_write(const Config *cfg, FILE *f);

/* Write the effective config into j as one JSON object, the member key of
 * the enclosing object (NULL at the top level or in an array):
 *   {"run": {"name": "cartpole", "seed": 1, ...}, "env": {...}, ...}
 * with the sections and keys config_write prints, in its order; numbers as
 * JSON numbers, booleans as booleans, strings and enum names as strings,
 * lists as arrays. */
void config_write_json(const Config *cfg, JsonW *j, const char *key);

/* True when a and b hold the same value for every key (numbers compared bit
 * for bit); source and origin are ignored. */
bool config_same(const Config *a, const Config *b);

/* The run's reward threshold ("solved" when an evaluation's mean reaches
 * it): env.reward_threshold's number, the environment's registered one for
 * "auto", or ENV_NO_THRESHOLD (a NaN: never solved; env_has_threshold) for
 * "none" or an environment that registers none. cfg must be validated. */
double config_reward_threshold(const Config *cfg);

/* Names for enum values as they appear in YAML. */
const char *config_sync_name(SyncMode m);
const char *config_allreduce_impl_name(AllreduceImpl m);
const char *config_gossip_topology_name(GossipTopology t);

/* Every learner holds the whole network and no parameter server is used:
 * allreduce, gossip, local_sgd. */
static inline bool config_sync_no_ps(SyncMode m) {
    return m == SYNC_ALLREDUCE || m == SYNC_GOSSIP || m == SYNC_LOCAL_SGD;
}

/* Decentralized: every learner applies its own gradients to its own copy
 * and its optimizer state, and the copies meet now and then (gossip,
 * easgd, local_sgd). */
static inline bool config_sync_decentral(SyncMode m) {
    return m == SYNC_GOSSIP || m == SYNC_EASGD || m == SYNC_LOCAL_SGD;
}

/* Runs an allreduce algorithm of sync.allreduce_impl: allreduce, local_sgd. */
static inline bool config_sync_uses_allreduce(SyncMode m) { return m == SYNC_ALLREDUCE || m == SYNC_LOCAL_SGD; }

/* The fewest learners a distributed job of mode m runs: 2 where learners
 * average with each other (gossip, local_sgd), else 1. */
static inline int config_sync_min_learners(SyncMode m) { return m == SYNC_GOSSIP || m == SYNC_LOCAL_SGD ? 2 : 1; }

/* The sync key of a decentralized mode's period in updates
 * ("gossip_every", ...), NULL for the others. */
static inline const char *config_sync_every_key(SyncMode m) {
    return m == SYNC_GOSSIP ? "gossip_every" : m == SYNC_EASGD ? "easgd_every" : m == SYNC_LOCAL_SGD ? "average_every" : NULL;
}
const char *config_lr_scaling_name(LrScaling s);
const char *config_learner_batch_name(LearnerBatch b);
const char *config_wait_name(WaitMode m);
const char *config_optim_name(CfgOptim k);
const char *config_rmsprop_eps_name(RmspropEps e);
const char *config_replay_name(ReplayKind k);
const char *config_initial_priority_name(InitialPriority k);

#endif
