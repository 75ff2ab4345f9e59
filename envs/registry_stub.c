/* registry_stub.c: TEMPORARY stand-in for the environment registry, so the
 * config loader can validate env.name before the envs branch lands. It has
 * the four names and nothing else (no dynamics); delete it at the merge,
 * where envs/ provides the real env_registry and env_find. */
#include "env.h"

#include <string.h>

static const EnvSpec cartpole = {.name = "CartPole-v1"};
static const EnvSpec mountaincar = {.name = "MountainCar-v0"};
static const EnvSpec acrobot = {.name = "Acrobot-v1"};
static const EnvSpec pendulum = {.name = "Pendulum-v1"};

const EnvSpec *const env_registry[] = {&cartpole, &mountaincar, &acrobot, &pendulum};
const int env_registry_count = (int)(sizeof env_registry / sizeof env_registry[0]);

const EnvSpec *env_find(const char *name) {
    for (int i = 0; i < env_registry_count; i++)
        if (!strcmp(env_registry[i]->name, name)) return env_registry[i];
    return NULL;
}
