"""
hlogym's pass-ordering environment (C++ core)
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['Env', 'VecEnv', 'autophase_feature_names', 'corpus_benchmarks', 'corpus_modules', 'data_root', 'env_defaults', 'expand_benchmark_locs', 'graph_node_feature_names', 'list_passes', 'list_pipelines', 'num_opcodes', 'observation_space_names', 'op_count', 'opcode_names', 'optimize_hlo', 'random_inputs', 'resolve_benchmark', 'resolve_suite', 'reward_space_names', 'search', 'validate_record']
class Env:
    """
    One pass-ordering environment (src/gym/environment.h); hlogym.make wraps it as a Gymnasium environment.
    """
    def __init__(self, actions: collections.abc.Sequence[str] = [], observation_spaces: collections.abc.Sequence[str] = ['op_histogram'], reward_space: str = 'op_count', traj_limit: typing.SupportsInt | typing.SupportsIndex = 10, gamma: typing.SupportsFloat | typing.SupportsIndex = 0.99, baseline: str = 'xla-cpu-default', use_cache: bool = True, cache_max_instructions: typing.SupportsInt | typing.SupportsIndex = 2000000, verify_each_step: bool = False, max_op_count_growth: typing.SupportsFloat | typing.SupportsIndex = 16.0, op_count_growth_allowance: typing.SupportsInt | typing.SupportsIndex = 10000) -> None:
        """
        Makes an environment; actions are pass, pipeline or sequence ('cse+dce') names (empty: every pass). ValueError for an unknown pass, observation or reward space.
        """
    def action_mask(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        A bool array over actions: True where the action would change the module.
        """
    def baseline_op_count(self) -> int:
        """
        D: the op count after the baseline pipeline (xla-cpu-default) for this benchmark.
        """
    def cache_stats(self) -> dict:
        """
        The step cache's hits, misses, entries, instructions held and evictions.
        """
    def fork(self) -> Env:
        """
        An independent copy of the current state (cheap: it shares the step cache).
        """
    def hlo_text(self, short_form: bool = False) -> str:
        """
        The current module in XLA's text format (short_form: without operand shapes).
        """
    def observe(self) -> dict:
        """
        The current state's observation dict.
        """
    def record(self) -> str:
        """
        The episode's state record (benchmark, passes, op counts) as JSON.
        """
    def replay(self, record_json: str) -> dict:
        """
        Resets to the record's benchmark and replays its passes; returns the observation dict.
        """
    def replay_file(self, path: str) -> dict:
        """
        As replay, from a record file.
        """
    def reset(self, benchmark: str) -> dict:
        """
        Loads a benchmark and starts an episode; returns the observation dict.
        """
    def step(self, action: typing.SupportsInt | typing.SupportsIndex) -> tuple:
        """
        Applies action `action` (an index into actions): (observation, reward, done, info).
        """
    def step_pass(self, pass_name: str) -> tuple:
        """
        As step, by the pass's name (it must be among actions).
        """
    def validate(self) -> dict:
        """
        Replays the record without the cache and checks it: verifier, op count, fingerprint, equivalence with the initial module (a dict; ok is the verdict).
        """
    def write_record(self, path: str) -> None:
        """
        Writes the state record to `path` (atomically).
        """
    @property
    def action_history(self) -> list[int]:
        """
        The action indices taken this episode (-1: a pass outside actions).
        """
    @property
    def actions(self) -> list[str]:
        """
        The action names, by index.
        """
    @property
    def benchmark(self) -> str:
        """
        The benchmark spec given to reset.
        """
    @property
    def benchmark_path(self) -> str:
        """
        The file the benchmark was read from.
        """
    @property
    def cost(self) -> tuple[float, float, float]:
        """
        (flops, transcendentals, bytes accessed) of the current module.
        """
    @property
    def episode_length(self) -> int:
        """
        Steps taken this episode.
        """
    @property
    def episode_reward(self) -> float:
        """
        Rewards summed this episode.
        """
    @property
    def fingerprint(self) -> str:
        """
        The current module's structural fingerprint (equal modules, equal fingerprints).
        """
    @property
    def has_state(self) -> bool:
        """
        Whether reset has loaded a benchmark.
        """
    @property
    def initial_op_count(self) -> int:
        """
        I: the benchmark's op count at reset.
        """
    @property
    def num_actions(self) -> int:
        """
        len(actions).
        """
    @property
    def observation_spaces(self) -> list[str]:
        """
        The observation spaces each observation dict holds.
        """
    @property
    def op_count(self) -> int:
        """
        The current module's op count.
        """
    @property
    def reward_space(self) -> str:
        """
        The reward space's name.
        """
    @property
    def traj_limit(self) -> int:
        """
        Steps per episode (0: no limit).
        """
class VecEnv:
    """
    num_envs environments stepped together on a thread pool (src/gym/vec_env.h), sharing one step cache.
    """
    def __init__(self, num_envs: typing.SupportsInt | typing.SupportsIndex, num_threads: typing.SupportsInt | typing.SupportsIndex = 1, actions: collections.abc.Sequence[str] = [], observation_spaces: collections.abc.Sequence[str] = ['op_histogram'], reward_space: str = 'op_count', traj_limit: typing.SupportsInt | typing.SupportsIndex = 10, gamma: typing.SupportsFloat | typing.SupportsIndex = 0.99, baseline: str = 'xla-cpu-default', use_cache: bool = True, cache_max_instructions: typing.SupportsInt | typing.SupportsIndex = 2000000, verify_each_step: bool = False, max_op_count_growth: typing.SupportsFloat | typing.SupportsIndex = 16.0, op_count_growth_allowance: typing.SupportsInt | typing.SupportsIndex = 10000) -> None:
        """
        Makes num_envs environments with Env's options, stepped on num_threads threads.
        """
    def env(self, i: typing.SupportsInt | typing.SupportsIndex) -> Env:
        """
        Environment i (owned by the VecEnv).
        """
    def reset(self, benchmarks: collections.abc.Sequence[str]) -> list:
        """
        Resets environment i to benchmarks[i]; the observation dicts.
        """
    def step(self, actions: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> list:
        """
        Steps environment i with actions[i]; the step tuples, as Env.step.
        """
    @property
    def num_envs(self) -> int:
        """
        How many environments.
        """
def autophase_feature_names() -> list[str]:
    """
    The names of the autophase observation's entries, in order.
    """
def corpus_benchmarks(suite: str = '', split: str = '') -> list[str]:
    """
    The corpus modules of a suite (gpt2, diverse; '' for all) in a split (train, test, heldout, train-seen; '' for all), by name.
    """
def corpus_modules() -> dict:
    """
    The corpus (text/corpus.h): name -> its manifest entry, with path made absolute and heldout and readable added; empty when there is no manifest
    """
def data_root() -> str:
    """
    The folder whose datasets/ module names resolve in ($HLOGYM_ROOT, else found upward from the package).
    """
def env_defaults() -> dict:
    """
    EnvOptions' defaults (src/gym/environment.h), by argument name
    """
def expand_benchmark_locs(locs: collections.abc.Sequence[str]) -> list[str]:
    """
    Benchmark specs with folders and suite names expanded to their modules.
    """
def graph_node_feature_names() -> list[str]:
    """
    The names of the graph observation's node columns, in order.
    """
def list_passes() -> list[tuple[str, str]]:
    """
    Every registered pass: (XLA name, summary).
    """
def list_pipelines() -> list[str]:
    """
    The named pipelines (xla-cpu-default, its exact variant, ...), usable as actions.
    """
def observation_space_names() -> list[str]:
    """
    The observation spaces an Env can return (op_histogram, cost, autophase, action_history, graph).
    """
def op_count(text: str) -> int:
    """
    Instructions in every computation of the module (I, D and R count so).
    """
def opcode_names() -> list[str]:
    """
    XLA's opcode names in the order of the op_histogram observation.
    """
def optimize_hlo(text: str, passes: collections.abc.Sequence[str], for_xla: bool = True) -> str:
    """
    HLO text after the named passes and pipelines, in order (`hlogym opt --passes`); for_xla: for XLA to compile, as `opt --for-xla` (rewrites XLA:CPU makes only after its own convolution canonicalization are left to it). An empty list prints the module as hlogym writes it. ValueError for bad text (line and column) or an unknown pass.
    """
def random_inputs(hlo_text: str, seed: typing.SupportsInt | typing.SupportsIndex = 0) -> list:
    """
    The entry parameters' seeded random inputs (src/eval/random_inputs.h, the generator `hlogym run --seed` uses), one (element type, .npy bytes) pair per array leaf, tuples flattened depth-first.
    """
def resolve_benchmark(spec: str) -> str:
    """
    The file a benchmark spec (a path, corpus/NAME, FAMILY/NAME, smoke/NAME) names; ValueError when none.
    """
def resolve_suite(suite: collections.abc.Sequence[str], split: str = '', dataset_split: str | None = None) -> list[str]:
    """
    The benchmarks `hlogym eval --suite SUITE... --split SPLIT` runs, in its order (corpus modules as corpus/NAME). The split applies to dataset folders (a manifest.json) too, unless dataset_split says otherwise ("": all of their modules, as the CLI does when --split is not given).
    """
def reward_space_names() -> list[str]:
    """
    The reward spaces (each also with the suffix +shaped).
    """
def search(benchmark: str, agent: str = 'auto', seed: typing.SupportsInt | typing.SupportsIndex = 0, budget: typing.SupportsInt | typing.SupportsIndex = 0) -> dict:
    """
    Runs an agent (auto, auto:PRIOR, coreset, coreset:DIR, greedy, beam, random, evo, default; the learned policies need the command line's LibTorch plugin) on a benchmark (a file or a name `hlogym eval` takes) as `hlogym search` does: a dict of passes, initial_op_count, op_count, steps, valid (the result's own check: replay, verifier, equivalence) and equivalence. budget: environment steps (0: the agent's default).
    """
def validate_record(record_json: str) -> str:
    """
    Parses a state record (ValueError when malformed) and returns it as hlogym writes it.
    """
__version__: str = '0.1.0'
num_opcodes: int = 136
