# SPDX-License-Identifier: MIT
"""A stub of gymnasium for tests/cli/pyenv.sh (the real one is not
installed here): make(ID, **kwargs) and spaces.Discrete, spaces.Box."""
import cartpole

from . import spaces  # noqa: F401


class Error(Exception):
    pass


def make(env_id, **kwargs):
    if env_id != "StubCartPole-v1":
        raise Error("Environment `%s` doesn't exist." % env_id)
    return cartpole.CartPole(**kwargs)
