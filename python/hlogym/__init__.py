"""hlogym: XLA's HLO pass ordering as a Gymnasium environment.

    import hlogym
    env = hlogym.make(benchmark_locs=["datasets/smoke/default_suite.txt"], traj_limit=10)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

The environment is registered as ``hlogym/XlaPassOrdering-v0``
(``gymnasium.make("hlogym:hlogym/XlaPassOrdering-v0")`` imports hlogym first). The C++ core
is the extension module ``hlogym._hlogym``: ``pip install .`` puts it into the package; run
from a checkout, the package finds it in $HLOGYM_BUILD_DIR/python/hlogym, then in
build/python/hlogym (scripts/setup.sh builds both).
"""

from __future__ import annotations

import glob as _glob
import os as _os

_HERE = _os.path.dirname(_os.path.abspath(__file__))
_REPO = _os.path.dirname(_os.path.dirname(_HERE))


def _extension_dirs():
    dirs = []
    if _os.environ.get("HLOGYM_BUILD_DIR"):
        dirs.append(
            _os.path.join(_os.path.abspath(_os.environ["HLOGYM_BUILD_DIR"]), "python", "hlogym")
        )
    dirs.append(_os.path.join(_REPO, "build", "python", "hlogym"))
    return [d for d in dirs if _glob.glob(_os.path.join(d, "_hlogym*.so"))]


if not _glob.glob(_os.path.join(_HERE, "_hlogym*.so")):
    __path__.extend(_extension_dirs()[:1])  # noqa: F821 (the package's own __path__)

_CPP_NAMES = (
    "Env",
    "VecEnv",
    "list_passes",
    "list_pipelines",
    "observation_space_names",
    "reward_space_names",
    "autophase_feature_names",
    "graph_node_feature_names",
    "opcode_names",
    "expand_benchmark_locs",
    "corpus_benchmarks",
    "resolve_benchmark",
    "resolve_suite",
    "data_root",
    "ENV_ID",
    "XlaPassOrderingEnv",
    "make",
    "register",
)

__all__ = list(_CPP_NAMES)

try:
    from . import _hlogym  # noqa: E402
except ImportError as _error:  # pragma: no cover - depends on the build
    # The pure-Python submodules (hlogym.xla, hlogym.xla_bench --from-export) still work, e.g.
    # on a machine that only has jaxlib; the environment names raise this when used.
    _missing = ImportError(
        "hlogym: the C++ extension _hlogym is not built; run scripts/setup.sh (or build the "
        f"_hlogym target and set HLOGYM_BUILD_DIR to the build folder): {_error}"
    )

    def __getattr__(name):
        if name in _CPP_NAMES or name == "__version__":
            raise _missing
        raise AttributeError(f"module 'hlogym' has no attribute {name!r}")
else:
    from .env import ENV_ID, XlaPassOrderingEnv, make, register  # noqa: E402, F401 (the API)

    __version__ = _hlogym.__version__
    Env = _hlogym.Env
    VecEnv = _hlogym.VecEnv
    list_passes = _hlogym.list_passes
    list_pipelines = _hlogym.list_pipelines
    observation_space_names = _hlogym.observation_space_names
    reward_space_names = _hlogym.reward_space_names
    autophase_feature_names = _hlogym.autophase_feature_names
    graph_node_feature_names = _hlogym.graph_node_feature_names
    opcode_names = _hlogym.opcode_names
    expand_benchmark_locs = _hlogym.expand_benchmark_locs
    corpus_benchmarks = _hlogym.corpus_benchmarks
    resolve_benchmark = _hlogym.resolve_benchmark
    resolve_suite = _hlogym.resolve_suite
    data_root = _hlogym.data_root

    register()
