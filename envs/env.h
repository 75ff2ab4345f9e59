/* SPDX-License-Identifier: MIT */
/* env.h: the whole contract between gorila and a simulator.
 *
 * Each environment file (cartpole.c, ...) exports one `const EnvSpec` and
 * keeps everything else static (MinAtar's ten ids: envs/minatar/minatar_env.c,
 * in a build with MINATAR=1). Environments never allocate, never print and
 * never use a hidden RNG: the generator lives in the Env instance and is
 * seeded by env_init. The internal state is float64 values, as in
 * Gymnasium, or an opaque block of bytes for an environment whose state is
 * larger (MinAtar's games: their objects and their own MT19937 generator,
 * about 32 KB); the observation is handed out as float32, a vector or
 * binary planes (EnvObsType).
 *
 * The generic part (env.c, which also holds the registry) adds what
 * Gymnasium's TimeLimit wrapper does: a step counter and truncation at
 * max_steps. env_init checks the spec (env_spec_check) before it touches
 * anything, so a spec past the limits below is an error, never a write past
 * a buffer. envcheck.h steps an environment and checks its behaviour
 * (`gorila env check`). Adding an environment: docs/ENVIRONMENTS.md.
 */
#ifndef GORILA_ENV_H
#define GORILA_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>

#include "rng.h"

/* Limits of any spec, checked by env_spec_check. Only per-instance arrays
 * (Env.state, Env.torques) and the command-line tools' one-observation
 * stack buffers are sized by them; batched observation arrays (actors,
 * evaluator, replay, learner) are sized from spec->obs_dim. Raising
 * ENV_MAX_STATE or ENV_MAX_ACTIONS costs 8 bytes per Env per unit;
 * ENV_MAX_OBS only 4 bytes of stack per buffer (no Env holds an
 * observation). A state larger than ENV_MAX_STATE doubles is a byte state
 * (state_bytes, below), which costs a classic Env nothing. */
#define ENV_MAX_STATE 64      /* float64 values of a classic env's internal state */
#define ENV_MAX_OBS 1024      /* floats in any env's observation (MinAtar: 10x10x10 = 1000 cells) */
#define ENV_MAX_ACTIONS 32    /* discrete actions (Pendulum torque set included) */
#define ENV_MAX_STATE_BYTES (1u << 20) /* bytes of a byte-state env's internal state */

/* "No registered reward threshold": the value of EnvSpec.reward_threshold
 * (and of a run's effective threshold) for an environment that is never
 * "solved". A NaN, so `mean >= threshold` is false without a special case;
 * test for it with env_has_threshold, never with ==. */
#define ENV_NO_THRESHOLD ((double)NAN)

/* How the obs_dim floats of an observation are to be read.
 *   ENV_OBS_VECTOR  a vector of real numbers (the classic environments)
 *   ENV_OBS_PLANES  binary planes: H x W x C cells in C order (row, column,
 *                   channel: cell (i, j, c) is obs[(i * W + j) * C + c]),
 *                   each 0.0f or 1.0f; obs_dim = H * W * C. A network may
 *                   read them as C channels of an H x W image; the MLP
 *                   reads them flattened. */
typedef enum { ENV_OBS_VECTOR = 0, ENV_OBS_PLANES = 1 } EnvObsType;

/* Per-instance options an environment takes (EnvSpec.options); env_init
 * refuses the others when they differ from their defaults. */
enum {
    ENV_TAKES_TORQUES = 1u << 0, /* EnvOptions.n_torques, torques (Pendulum-v1) */
    ENV_TAKES_MINATAR = 1u << 1, /* EnvOptions sticky_actions, no_difficulty_ramping (MinAtar) */
};

typedef struct {
    double reward;
    bool terminated;  /* true end of the task: no bootstrapping */
    bool truncated;   /* time limit reached: bootstrap from the next state */
} EnvStep;

typedef struct Env Env;

/* An environment outside this layer (the Python bridge, src/pyenv): its
 * spec is built at run time by the bridge, and env_init and env_free call
 * these hooks to make and release each instance's external object (in
 * e->ext, owned by the bridge). The bridge allocates, prints and reports
 * the failures of the code it calls (Env.failed); this layer only calls. */
/* What an external instance's failure (Env.failed) broke (EnvExtern.failure). */
typedef enum {
    ENV_EXT_FAIL_CALL = 1,   /* reset or step raised, or returned other than the API's tuple and types */
    ENV_EXT_FAIL_OBS,        /* an observation not an array of the observation space's dtype and size */
    ENV_EXT_FAIL_OBS_FINITE, /* an observation value not finite */
    ENV_EXT_FAIL_REWARD,     /* a reward not finite */
} EnvExtFailure;

typedef struct EnvExtern {
    /* Make e's object (e->spec, e->rng and the options are set). Returns 0,
     * or -1 with one line in err (ERR_LEN bytes); e->ext is then NULL. */
    int (*open)(Env *e, char *err);
    /* Release e->ext; safe when it is NULL. */
    void (*close)(Env *e);
    /* Make e's next reset a seeded one again, its seed drawn from e->rng
     * then (env_restore: a resumed slot's generator is the checkpoint's,
     * set after the instance's first reset). */
    void (*reseed)(Env *e);
    /* Optional: why e failed (e->failed): an EnvExtFailure, with one line
     * ("step: the reward is inf (not finite)") into why (ERR_LEN bytes).
     * `gorila env check` charges it to its check (envcheck.h). */
    EnvExtFailure (*failure)(const Env *e, char *why);
} EnvExtern;

/* One environment. Every field is required (env_spec_check) except those
 * marked optional. The whole episode state lives either in e->state[0 ..
 * state_dim) (a classic env: float64 values, state_bytes 0) or in the
 * e->ext block of state_bytes bytes (a byte-state env: state_dim 0; plain
 * data, no pointers, e.g. a game's objects and its own generator):
 * reset_state, dynamics and observe read and write nothing else (no
 * statics, no globals), and all randomness comes from e->rng or from a
 * generator inside that state, so that env_get_state/env_set_state and
 * seeding reproduce an episode. */
typedef struct EnvSpec {
    const char *name;          /* id, e.g. "CartPole-v1" or "MinAtar/Breakout-v1": non-empty, no blanks */
    int obs_dim;               /* floats written by observe: 1 .. ENV_MAX_OBS */
    EnvObsType obs_type;       /* ENV_OBS_VECTOR (the zero default) or ENV_OBS_PLANES */
    int obs_shape[3];          /* planes: H, W, C (each >= 1, product obs_dim); vectors: all 0 */
    int num_actions;           /* default action count, 2 .. ENV_MAX_ACTIONS (Pendulum: default torque set) */
    int state_dim;             /* float64 values of the internal state: 0 .. ENV_MAX_STATE */
    size_t state_bytes;        /* byte state: 0 .. ENV_MAX_STATE_BYTES; exactly one of state_dim and
                                * state_bytes is nonzero */
    int max_episode_steps;     /* registered time limit, >= 1; 0 = none (the episode ends only when
                                * it terminates, or at EnvOptions.max_episode_steps) */
    double reward_threshold;   /* registered threshold ("solved"), finite, or ENV_NO_THRESHOLD */
    unsigned options;          /* ENV_TAKES_* bits: the per-instance options it takes */
    /* Optional, byte-state envs only: prepare e->ext (zeroed, state_bytes)
     * once, at env_init, after e->rng is seeded; may draw from e->rng
     * (e.g. to seed a generator of its own). */
    void (*init_ext)(Env *e);
    /* Draw a fresh internal state from e->rng (or the state's own
     * generator), as Gymnasium's reset does. */
    void (*reset_state)(Env *e);
    /* Advance the state by one action (0 .. e->num_actions-1); fill reward
     * (finite) and terminated (never truncated: the time limit is the
     * generic layer's). */
    EnvStep (*dynamics)(Env *e, int action);
    /* Observation of the state: exactly obs_dim finite floats (planes:
     * each 0.0f or 1.0f). */
    void (*observe)(const Env *e, float *obs);
    /* Optional: bounds of every observation, obs_dim floats each, as
     * Gymnasium's observation_space.low/high (+-INFINITY for an unbounded
     * component). Both NULL (no bounds) or both set with low[i] <= high[i].
     * Only `gorila env check` reads them (planes are checked for 0/1
     * without them). */
    const float *obs_low, *obs_high;
    /* Optional: an external environment (EnvExtern above), with state_dim
     * and state_bytes 0 and no options; host is the bridge's, unread here.
     * Its dynamics may set truncated (the environment's own time limit). */
    const EnvExtern *ext_hooks;
    void *host;
} EnvSpec;

/* Per-instance options. Zero-initialised means "all defaults". */
typedef struct {
    int max_episode_steps;             /* 0 = spec default (which may be none) */
    int n_torques;                     /* Pendulum: 0 = default {-2, 0, 2} */
    double torques[ENV_MAX_ACTIONS];
    bool sticky_given;                 /* MinAtar: sticky_actions set (else the default 0.1) */
    double sticky_actions;             /* MinAtar: probability in [0, 1] of repeating the last action */
    bool no_difficulty_ramping;        /* MinAtar: true turns difficulty ramping off (default on) */
} EnvOptions;

/* MinAtar's defaults, as the reference's Environment. */
#define ENV_MINATAR_STICKY_DEFAULT 0.1

struct Env {
    const EnvSpec *spec;
    double state[ENV_MAX_STATE];
    void *ext;                         /* byte-state envs: spec->state_bytes bytes, owned (env_free);
                                        * NULL for a classic env */
    int t;                             /* steps since reset / set_state */
    bool terminated;                   /* a step of this episode has terminated: Gymnasium's
                                        * CartPole pays 0 for steps beyond termination */
    bool ramping;                      /* MinAtar: difficulty ramping */
    int max_steps;                     /* time limit; 0 = none */
    int num_actions;
    double sticky;                     /* MinAtar: sticky-action probability */
    double torques[ENV_MAX_ACTIONS];   /* Pendulum discrete torques */
    bool failed;                       /* external env: its code raised or broke the contract in a
                                        * reset or step (the bridge said why); the episode is void */
    Rng rng;
};

/* All environments, in a fixed order, and their number. */
extern const EnvSpec *const env_registry[];
extern const int env_registry_count;

/* Look an environment up by its exact name; NULL if unknown. */
const EnvSpec *env_find(const char *name);

/* An id of an external environment, resolved by the Python bridge rather
 * than the registry: "python:MODULE:CALLABLE" or "gymnasium:ID". Returns
 * ENV_EXT_PYTHON or ENV_EXT_GYMNASIUM for such a name, 0 for any other
 * (its syntax is env_extern_check's). */
enum { ENV_EXT_PYTHON = 1, ENV_EXT_GYMNASIUM = 2 };
int env_extern_kind(const char *name);

/* Whether name is a well-formed external id: "python:" then a dotted
 * module path, ':' and a dotted attribute path (Python identifiers), or
 * "gymnasium:" then a non-empty id without blanks. Returns 0, or -1 with
 * the reason in err (ERR_LEN bytes). */
int env_extern_check(const char *name, char *err);

/* Check spec's fields against the rules beside them in EnvSpec and the
 * limits above. Returns 0, or -1 with one line in err (ERR_LEN bytes) that
 * names the environment, the field and the limit, e.g.
 * `env "Foo-v0": obs_dim 80 exceeds ENV_MAX_OBS (64)`. spec may be NULL
 * (an error). */
int env_spec_check(const EnvSpec *spec, char *err);

/* env_spec_check on every registered spec, and no two with one name.
 * Returns 0, or -1 with the first problem in err. */
int env_registry_check(char *err);

/* Whether threshold is a threshold (not ENV_NO_THRESHOLD). */
static inline bool env_has_threshold(double threshold) { return threshold == threshold; }

/* Bytes of spec's internal state as env_get_state writes it: state_dim
 * doubles, or state_bytes. */
size_t env_state_size(const EnvSpec *spec);

/* The observation's shape as text into buf (cap bytes): "4" for a vector
 * of 4, "10x10x4" for planes. Returns buf. */
const char *env_obs_text(const EnvSpec *spec, char *buf, size_t cap);

/* Prepare an instance. seed and stream seed e->rng with rng_seed(&e->rng,
 * seed, stream); a byte-state env also gets its e->ext block (allocated
 * here, the only allocation of this module; init_ext prepares it). e is
 * overwritten: env_free an initialised byte-state instance first. Returns
 * 0, or -1 with a message in err (ERR_LEN bytes) for a spec that fails
 * env_spec_check or bad options (torques for a non-Pendulum env, MinAtar
 * options for a non-MinAtar env, too many actions, non-finite torque,
 * sticky probability outside [0, 1]); e then holds nothing to free. */
int env_init(Env *e, const EnvSpec *spec, const EnvOptions *opt, uint64_t seed, uint64_t stream, char *err);

/* Start an external environment's instance e (env_init'ed, not failed)
 * afresh as env_init(e, e->spec, its options, seed, stream) would, keeping
 * its instance (whose constructor may be costly): the generator seeded
 * with (seed, stream), the step count and terminated flag cleared, and its
 * next reset a seeded one again (EnvExtern.reseed), its seed the one a new
 * instance's first reset would draw. The evaluator's slots. */
void env_reseed(Env *e, uint64_t seed, uint64_t stream);

/* Release e->ext; safe on a zeroed or freed Env and on a classic one. */
void env_free(Env *e);

/* dst = src, ext block included (a plain struct copy would share it): dst
 * must be an instance initialised with the same spec. */
void env_copy(Env *dst, const Env *src);

/* Start an episode: new internal state from e->rng, t = 0, write obs. */
void env_reset(Env *e, float *obs);

/* Apply action (0 .. num_actions-1), advance t, write obs; truncated is set
 * when t reaches max_steps (if any), or an external environment said so,
 * and the episode did not terminate. An external environment that failed
 * (e->failed) gives a zero step and a zero observation. */
EnvStep env_step(Env *e, int action, float *obs);

/* Copy the internal state out: env_state_size(e->spec) bytes (a classic
 * env's state_dim doubles; a byte-state env's whole block). */
void env_get_state(const Env *e, void *state);

/* Set the internal state (env_state_size bytes, as env_get_state wrote
 * them for the same spec) and start a new episode (t = 0), writing the
 * observation of that state. The instance's options (sticky actions,
 * ramping, torques, time limit) stay its own. */
void env_set_state(Env *e, const void *state, float *obs);

/* A whole instance as bytes, for checkpoints: the step count, the
 * terminated flag, the generator and the internal state, so that
 * env_restore continues the episode where env_snapshot left it (unlike
 * env_set_state, which starts a new one). env_snapshot_size(spec) bytes;
 * host byte order (a checkpoint is refused on another byte order). */
size_t env_snapshot_size(const EnvSpec *spec);
void env_snapshot(const Env *e, void *buf);

/* Load a snapshot of an instance of the same spec into e (initialised;
 * its options are kept) and write the observation. An external
 * environment's state is not in the snapshot: its instance starts a fresh
 * episode (env_reset, a seeded one: EnvExtern.reset) instead, from the
 * snapshot's generator. Returns 0, or -1 with
 * err when the snapshot's counters are out of range (damage). */
int env_restore(Env *e, const void *buf, float *obs, char *err);

#endif
