// hlogym._hlogym: the Python bindings of the gym (src/gym), the same public
// API the C++ agents use. One translation unit. The Gymnasium environment is
// python/hlogym/env.py on top of this.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "agents/agent.h"
#include "agents/evaluation.h"
#include "eval/npy_io.h"
#include "eval/random_inputs.h"
#include "gym/environment.h"
#include "gym/vec_env.h"
#include "hlo/opcode.h"
#include "passes/pass.h"
#include "passes/registry.h"
#include "text/corpus.h"
#include "text/parser.h"
#include "text/printer.h"

namespace py = pybind11;

namespace hlogym {
namespace {

// Errors become the Python exception that fits the status code.
[[noreturn]] void Raise(const absl::Status& status) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      py::set_error(PyExc_FileNotFoundError, message.c_str());
      throw py::error_already_set();
    case absl::StatusCode::kInvalidArgument:
      throw py::value_error(message);
    case absl::StatusCode::kOutOfRange:
      throw py::index_error(message);
    case absl::StatusCode::kResourceExhausted:
      py::set_error(PyExc_MemoryError, message.c_str());
      throw py::error_already_set();
    default:
      throw std::runtime_error(message);
  }
}

template <typename T>
T Unwrap(absl::StatusOr<T> value) {
  if (!value.ok()) Raise(value.status());
  return *std::move(value);
}

template <typename T>
py::array_t<T> ToArray(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

template <typename T>
py::array_t<T> ToMatrix(const std::vector<T>& v, int64_t rows, int64_t cols) {
  py::array_t<T> a({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)});
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::dict ObservationToDict(const Environment& env, const Observation& obs) {
  py::dict d;
  for (ObservationKind kind : env.observation_kinds()) {
    const std::string name(ObservationKindName(kind));
    switch (kind) {
      case ObservationKind::kOpHistogram:
        d[name.c_str()] = ToArray(obs.op_histogram);
        break;
      case ObservationKind::kCost:
        d[name.c_str()] = ToArray(obs.cost);
        break;
      case ObservationKind::kAutophase:
        d[name.c_str()] = ToArray(obs.autophase);
        break;
      case ObservationKind::kActionHistory:
        d[name.c_str()] = ToArray(obs.action_history);
        break;
      case ObservationKind::kGraph: {
        py::dict g;
        const GraphObservation& graph = *obs.graph;
        g["nodes"] =
            ToMatrix(graph.node_features, graph.num_nodes, GraphObservation::kNodeFeatures);
        g["edges"] =
            ToMatrix(graph.edge_features, graph.num_edges, GraphObservation::kEdgeFeatures);
        g["edge_links"] = ToMatrix(graph.edge_links, graph.num_edges, 2);
        d[name.c_str()] = g;
        break;
      }
    }
  }
  return d;
}

py::dict InfoToDict(const StepInfo& info) {
  py::dict d;
  d["action"] = info.action;
  d["changed"] = info.changed;
  d["cache_hit"] = info.cache_hit;
  d["error"] = info.error;
  d["op_count"] = info.op_count;
  d["previous_op_count"] = info.previous_op_count;
  d["pass_ms"] = info.pass_ms;
  return d;
}

py::tuple StepToTuple(const Environment& env, const StepResult& r) {
  return py::make_tuple(ObservationToDict(env, r.observation), r.reward, r.terminated, r.truncated,
                        InfoToDict(r.info));
}

py::dict ValidationToDict(const ValidationResult& v) {
  py::dict d;
  d["ok"] = v.ok;
  d["replay_ok"] = v.replay_ok;
  d["op_count_ok"] = v.op_count_ok;
  d["fingerprint_ok"] = v.fingerprint_ok;
  d["verifier_ok"] = v.verifier_ok;
  d["equivalence"] = v.equivalence;
  d["errors"] = v.errors;
  return d;
}

EnvOptions MakeOptions(std::vector<std::string> actions,
                       std::vector<std::string> observation_spaces, std::string reward_space,
                       int traj_limit, double gamma, std::string baseline, bool use_cache,
                       int64_t cache_max_instructions, bool verify_each_step,
                       double max_op_count_growth, int64_t op_count_growth_allowance) {
  EnvOptions o;
  o.actions = std::move(actions);
  // Empty: every pass (not the pipelines, which EnvRegistry also holds).
  if (o.actions.empty()) {
    for (const PassInfo& info : PassRegistry::Builtin().passes()) o.actions.push_back(info.name);
  }
  o.observation_spaces = std::move(observation_spaces);
  o.reward_space = std::move(reward_space);
  o.traj_limit = traj_limit;
  o.gamma = gamma;
  o.baseline = std::move(baseline);
  o.use_cache = use_cache;
  o.cache_max_instructions = cache_max_instructions;
  o.verify_each_step = verify_each_step;
  o.max_op_count_growth = max_op_count_growth;
  o.op_count_growth_allowance = op_count_growth_allowance;
  return o;
}

// Actions may name passes, pipelines (macro-actions) and sequences
// ("cse+dce"), as the command line's may.
const PassRegistry& EnvRegistry() { return PassRegistry::WithPipelines(); }

const Environment& Ready(const Environment& env) {
  if (!env.has_state()) throw std::runtime_error("call reset() first");
  return env;
}

// The environment's defaults are EnvOptions' own (src/gym/environment.h);
// env_defaults() hands them to the Python signature (hlogym/env.py).
const EnvOptions kEnvDefaults;

py::dict EnvDefaults() {
  py::dict d;
  d["actions"] = kEnvDefaults.actions;
  d["observation_spaces"] = kEnvDefaults.observation_spaces;
  d["reward_space"] = kEnvDefaults.reward_space;
  d["traj_limit"] = kEnvDefaults.traj_limit;
  d["gamma"] = kEnvDefaults.gamma;
  d["baseline"] = kEnvDefaults.baseline;
  d["use_cache"] = kEnvDefaults.use_cache;
  d["cache_max_instructions"] = kEnvDefaults.cache_max_instructions;
  d["verify_each_step"] = kEnvDefaults.verify_each_step;
  d["max_op_count_growth"] = kEnvDefaults.max_op_count_growth;
  d["op_count_growth_allowance"] = kEnvDefaults.op_count_growth_allowance;
  return d;
}

#define HLOGYM_ENV_OPTION_ARGS                                                                \
  py::arg("actions") = kEnvDefaults.actions,                                                  \
  py::arg("observation_spaces") = kEnvDefaults.observation_spaces,                            \
  py::arg("reward_space") = kEnvDefaults.reward_space,                                        \
  py::arg("traj_limit") = kEnvDefaults.traj_limit, py::arg("gamma") = kEnvDefaults.gamma,     \
  py::arg("baseline") = kEnvDefaults.baseline, py::arg("use_cache") = kEnvDefaults.use_cache, \
  py::arg("cache_max_instructions") = kEnvDefaults.cache_max_instructions,                    \
  py::arg("verify_each_step") = kEnvDefaults.verify_each_step,                                \
  py::arg("max_op_count_growth") = kEnvDefaults.max_op_count_growth,                          \
  py::arg("op_count_growth_allowance") = kEnvDefaults.op_count_growth_allowance

}  // namespace
}  // namespace hlogym

using namespace hlogym;  // NOLINT: the bindings name everything in it

PYBIND11_MODULE(_hlogym, m) {
  m.doc() = "hlogym's pass-ordering environment (C++ core)";
  m.attr("__version__") = HLOGYM_VERSION;

  m.def(
      "list_passes",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const PassInfo& info : PassRegistry::Builtin().passes()) {
          out.emplace_back(info.name, info.summary);
        }
        return out;
      },
      "Every registered pass: (XLA name, summary).");
  m.def(
      "list_pipelines",
      [] {
        std::vector<std::string> out;
        for (const PipelineInfo& p : BuiltinPipelines()) out.push_back(p.name);
        return out;
      },
      "The named pipelines (xla-cpu-default, its exact variant, ...), usable as actions.");
  m.def("observation_space_names", &ObservationSpaceNames,
        "The observation spaces an Env can return (op_histogram, cost, autophase, "
        "action_history, graph).");
  m.def("reward_space_names", &RewardSpaceNames,
        "The reward spaces (each also with the suffix +shaped).");
  m.def("autophase_feature_names", &AutophaseFeatureNames,
        "The names of the autophase observation's entries, in order.");
  m.def("graph_node_feature_names", &GraphNodeFeatureNames,
        "The names of the graph observation's node columns, in order.");
  m.def(
      "opcode_names",
      [] {
        std::vector<std::string> names;
        for (int i = 0; i < kOpcodeCount; ++i) {
          names.emplace_back(OpcodeName(static_cast<Opcode>(i)));
        }
        return names;
      },
      "XLA's opcode names in the order of the op_histogram observation.");
  m.attr("num_opcodes") = kOpcodeCount;
  m.def(
      "random_inputs",
      [](const std::string& text, uint64_t seed) {
        std::unique_ptr<Module> module = Unwrap(ParseModule(text, "random_inputs"));
        py::list leaves;
        for (const Literal& argument : Unwrap(MakeRandomArguments(*module, seed))) {
          for (const LiteralLeaf& leaf : argument.ArrayLeaves()) {
            leaves.append(
                py::make_tuple(std::string(PrimitiveTypeName(leaf.array->shape().element_type())),
                               py::bytes(Unwrap(EncodeNpy(*leaf.array)))));
          }
        }
        return leaves;
      },
      py::arg("hlo_text"), py::arg("seed") = 0,
      "The entry parameters' seeded random inputs (src/eval/random_inputs.h, the generator "
      "`hlogym run --seed` uses), one (element type, .npy bytes) pair per array leaf, tuples "
      "flattened depth-first.");
  m.def("env_defaults", &EnvDefaults,
        "EnvOptions' defaults (src/gym/environment.h), by argument name");
  m.def("data_root", &DataRoot,
        "The folder whose datasets/ module names resolve in ($HLOGYM_ROOT, else found upward "
        "from the package).");
  m.def(
      "resolve_benchmark",
      [](const std::string& spec) { return Unwrap(ResolveBenchmarkPath(spec)); }, py::arg("spec"),
      "The file a benchmark spec (a path, corpus/NAME, FAMILY/NAME, smoke/NAME) names; "
      "ValueError when none.");
  m.def(
      "expand_benchmark_locs",
      [](const std::vector<std::string>& locs) { return Unwrap(ExpandBenchmarkLocs(locs)); },
      py::arg("locs"), "Benchmark specs with folders and suite names expanded to their modules.");
  m.def("corpus_benchmarks", &CorpusBenchmarkNames, py::arg("suite") = "", py::arg("split") = "",
        "The corpus modules of a suite (gpt2, diverse; '' for all) in a split (train, test, "
        "heldout, train-seen; '' for all), by name.");
  m.def(
      "corpus_modules",
      [] {
        py::dict modules;
        py::object loads = py::module_::import("json").attr("loads");
        for (const CorpusModule& c : Corpus::Default().modules()) {
          py::dict d = loads(c.entry_json);  // the entry as written, then what is read here
          d["path"] = c.path;
          d["heldout"] = c.heldout;
          d["readable"] = c.readable;
          modules[py::str(c.name)] = d;
        }
        return modules;
      },
      "The corpus (text/corpus.h): name -> its manifest entry, with path made absolute and "
      "heldout and readable added; empty when there is no manifest");
  m.def(
      "resolve_suite",
      [](const std::vector<std::string>& suite, const std::string& split,
         const std::optional<std::string>& dataset_split) {
        return Unwrap(ResolveSuite(suite, split, dataset_split.value_or(split)));
      },
      py::arg("suite"), py::arg("split") = "", py::arg("dataset_split") = py::none(),
      "The benchmarks `hlogym eval --suite SUITE... --split SPLIT` runs, in its order (corpus "
      "modules as corpus/NAME). The split applies to dataset folders (a manifest.json) too, "
      "unless dataset_split says otherwise (\"\": all of their modules, as the CLI does when "
      "--split is not given).");
  m.def(
      "optimize_hlo",
      [](const std::string& text, const std::vector<std::string>& passes, bool for_xla) {
        std::unique_ptr<Module> module = Unwrap(ParseModule(text));
        if (!passes.empty()) {
          absl::StatusOr<std::unique_ptr<Pass>> pass = CreatePassList(
              absl::StrJoin(passes, ","), for_xla ? PassTarget::kXla : PassTarget::kHlogym);
          // An unknown name is the caller's argument (the registry says NotFound).
          if (!pass.ok()) throw py::value_error(std::string(pass.status().message()));
          absl::StatusOr<bool> changed;
          {
            py::gil_scoped_release release;
            changed = RunPass(**pass, *module);
          }
          Unwrap(std::move(changed));
        }
        return PrintModule(*module);
      },
      py::arg("text"), py::arg("passes"), py::arg("for_xla") = true,
      "HLO text after the named passes and pipelines, in order (`hlogym opt --passes`); "
      "for_xla: for XLA to compile, as `opt --for-xla` (rewrites XLA:CPU makes only after its "
      "own convolution canonicalization are left to it). An empty list prints the module as "
      "hlogym writes it. ValueError for bad text (line and column) or an unknown pass.");
  m.def(
      "op_count",
      [](const std::string& text) { return Unwrap(ParseModule(text))->instruction_count(); },
      py::arg("text"), "Instructions in every computation of the module (I, D and R count so).");
  m.def(
      "search",
      [](const std::string& benchmark, const std::string& agent_name, uint64_t seed,
         int64_t budget) {
        AgentOptions options;
        options.seed = seed;
        std::unique_ptr<Agent> agent = Unwrap(MakeAgent(agent_name, options));
        SearchBudget limit;
        limit.steps = budget > 0 ? budget : (agent->needs_budget() ? kDefaultSearchSteps : 0);
        absl::StatusOr<SearchResult> result;
        ValidationResult validation;
        {
          py::gil_scoped_release release;
          result = agent->Optimize(benchmark, limit);
          if (result.ok()) {
            validation = result->validation ? *result->validation : result->env->Validate();
          }
        }
        const SearchResult found = Unwrap(std::move(result));
        py::dict out;
        out["passes"] = found.passes;
        out["initial_op_count"] = found.initial_op_count;
        out["op_count"] = found.op_count;
        out["steps"] = found.steps;
        out["valid"] = validation.ok;
        out["equivalence"] = validation.equivalence;
        return out;
      },
      py::arg("benchmark"), py::arg("agent") = "auto", py::arg("seed") = 0, py::arg("budget") = 0,
      "Runs an agent (auto, auto:PRIOR, coreset, coreset:DIR, greedy, beam, random, evo, "
      "default; the learned policies need the command line's LibTorch plugin) on a benchmark "
      "(a file or a name `hlogym eval` takes) as `hlogym search` does: a dict of passes, "
      "initial_op_count, op_count, steps, valid (the result's own check: replay, verifier, "
      "equivalence) and equivalence. budget: environment steps (0: the agent's default).");
  m.def(
      "validate_record",
      [](const std::string& json) { return Unwrap(StateRecord::FromJson(json)).ToJson(); },
      py::arg("record_json"),
      "Parses a state record (ValueError when malformed) and returns it as hlogym writes it.");

  py::class_<Environment>(m, "Env",
                          "One pass-ordering environment (src/gym/environment.h); "
                          "hlogym.make wraps it as a Gymnasium environment.")
      .def(
          py::init([](std::vector<std::string> actions, std::vector<std::string> observation_spaces,
                      std::string reward_space, int traj_limit, double gamma, std::string baseline,
                      bool use_cache, int64_t cache_max_instructions, bool verify_each_step,
                      double max_op_count_growth, int64_t op_count_growth_allowance) {
            return Unwrap(Environment::Create(
                MakeOptions(std::move(actions), std::move(observation_spaces),
                            std::move(reward_space), traj_limit, gamma, std::move(baseline),
                            use_cache, cache_max_instructions, verify_each_step,
                            max_op_count_growth, op_count_growth_allowance),
                EnvRegistry()));
          }),
          HLOGYM_ENV_OPTION_ARGS,
          "Makes an environment; actions are pass, pipeline or sequence ('cse+dce') names "
          "(empty: every pass). "
          "ValueError for an unknown pass, observation or reward space.")
      .def(
          "reset",
          [](Environment& env, const std::string& benchmark) {
            absl::StatusOr<Observation> obs;
            {
              py::gil_scoped_release release;
              obs = env.Reset(benchmark);
            }
            return ObservationToDict(env, Unwrap(std::move(obs)));
          },
          py::arg("benchmark"),
          "Loads a benchmark and starts an episode; returns the observation dict.")
      .def(
          "step",
          [](Environment& env, int action) {
            absl::StatusOr<StepResult> r;
            {
              py::gil_scoped_release release;
              r = env.Step(action);
            }
            return StepToTuple(env, Unwrap(std::move(r)));
          },
          py::arg("action"),
          "Applies action `action` (an index into actions): (observation, reward, done, info).")
      .def(
          "step_pass",
          [](Environment& env, const std::string& name) {
            absl::StatusOr<StepResult> r;
            {
              py::gil_scoped_release release;
              r = env.Step(std::string_view(name));
            }
            return StepToTuple(env, Unwrap(std::move(r)));
          },
          py::arg("pass_name"), "As step, by the pass's name (it must be among actions).")
      .def(
          "observe",
          [](const Environment& env) { return ObservationToDict(env, Ready(env).Observe()); },
          "The current state's observation dict.")
      .def(
          "action_mask",
          [](Environment& env) {
            std::vector<bool> mask;
            {
              py::gil_scoped_release release;
              mask = env.ActionMask();
            }
            py::array_t<bool> a(static_cast<py::ssize_t>(mask.size()));
            for (size_t i = 0; i < mask.size(); ++i) a.mutable_data()[i] = mask[i];
            return a;
          },
          "A bool array over actions: True where the action would change the module.")
      .def(
          "fork", [](const Environment& env) { return env.Fork(); },
          "An independent copy of the current state (cheap: it shares the step cache).")
      .def(
          "record", [](const Environment& env) { return env.record().ToJson(); },
          "The episode's state record (benchmark, passes, op counts) as JSON.")
      .def(
          "write_record",
          [](const Environment& env, const std::string& path) {
            absl::Status s = env.record().WriteFile(path);
            if (!s.ok()) Raise(s);
          },
          py::arg("path"), "Writes the state record to `path` (atomically).")
      .def(
          "replay",
          [](Environment& env, const std::string& json) {
            StateRecord record = Unwrap(StateRecord::FromJson(json));
            absl::Status s;
            {
              py::gil_scoped_release release;
              s = env.Replay(record);
            }
            if (!s.ok()) Raise(s);
            return ObservationToDict(env, env.Observe());
          },
          py::arg("record_json"),
          "Resets to the record's benchmark and replays its passes; returns the observation dict.")
      .def(
          "replay_file",
          [](Environment& env, const std::string& path) {
            StateRecord record = Unwrap(StateRecord::ReadFile(path));
            absl::Status s;
            {
              py::gil_scoped_release release;
              s = env.Replay(record);
            }
            if (!s.ok()) Raise(s);
            return ObservationToDict(env, env.Observe());
          },
          py::arg("path"), "As replay, from a record file.")
      .def(
          "validate",
          [](const Environment& env) {
            ValidationResult v;
            {
              py::gil_scoped_release release;
              v = env.Validate();
            }
            return ValidationToDict(v);
          },
          "Replays the record without the cache and checks it: verifier, op count, fingerprint, "
          "equivalence with the initial module (a dict; ok is the verdict).")
      .def(
          "baseline_op_count",
          [](Environment& env) {
            absl::StatusOr<int64_t> d;
            {
              py::gil_scoped_release release;
              d = env.BaselineOpCount();
            }
            return Unwrap(std::move(d));
          },
          "D: the op count after the baseline pipeline (xla-cpu-default) for this benchmark.")
      .def(
          "hlo_text",
          [](const Environment& env, bool short_form) {
            return PrintModule(Ready(env).module(),
                               short_form ? PrintOptions::Short() : PrintOptions());
          },
          py::arg("short_form") = false,
          "The current module in XLA's text format (short_form: without operand shapes).")
      .def(
          "cache_stats",
          [](const Environment& env) {
            py::dict d;
            if (!env.cache()) return d;
            StepCacheStats s = env.cache()->stats();
            d["hits"] = s.hits;
            d["misses"] = s.misses;
            d["entries"] = s.entries;
            d["instructions"] = s.instructions;
            d["evictions"] = s.evictions;
            return d;
          },
          "The step cache's hits, misses, entries, instructions held and evictions.")
      .def_property_readonly("actions", &Environment::actions, "The action names, by index.")
      .def_property_readonly("num_actions", &Environment::num_actions, "len(actions).")
      .def_property_readonly(
          "observation_spaces",
          [](const Environment& env) { return env.options().observation_spaces; },
          "The observation spaces each observation dict holds.")
      .def_property_readonly(
          "reward_space", [](const Environment& env) { return RewardSpaceName(env.reward_spec()); },
          "The reward space's name.")
      .def_property_readonly(
          "traj_limit", [](const Environment& env) { return env.options().traj_limit; },
          "Steps per episode (0: no limit).")
      .def_property_readonly("has_state", &Environment::has_state,
                             "Whether reset has loaded a benchmark.")
      .def_property_readonly("op_count", &Environment::op_count, "The current module's op count.")
      .def_property_readonly("initial_op_count", &Environment::initial_op_count,
                             "I: the benchmark's op count at reset.")
      .def_property_readonly("episode_length", &Environment::episode_length,
                             "Steps taken this episode.")
      .def_property_readonly("episode_reward", &Environment::episode_reward,
                             "Rewards summed this episode.")
      .def_property_readonly("action_history", &Environment::action_history,
                             "The action indices taken this episode (-1: a pass outside actions).")
      .def_property_readonly(
          "benchmark", [](const Environment& env) { return env.benchmark().spec; },
          "The benchmark spec given to reset.")
      .def_property_readonly(
          "benchmark_path", [](const Environment& env) { return env.benchmark().path; },
          "The file the benchmark was read from.")
      .def_property_readonly(
          "fingerprint",
          [](const Environment& env) { return Ready(env).state()->fingerprint().ToString(); },
          "The current module's structural fingerprint (equal modules, equal fingerprints).")
      .def_property_readonly(
          "cost",
          [](const Environment& env) {
            const CostFeatures& c = Ready(env).state()->cost();
            return py::make_tuple(c.flops, c.transcendentals, c.bytes_accessed);
          },
          "(flops, transcendentals, bytes accessed) of the current module.");

  py::class_<VecEnvironment>(m, "VecEnv",
                             "num_envs environments stepped together on a thread pool "
                             "(src/gym/vec_env.h), sharing one step cache.")
      .def(py::init([](int num_envs, int num_threads, std::vector<std::string> actions,
                       std::vector<std::string> observation_spaces, std::string reward_space,
                       int traj_limit, double gamma, std::string baseline, bool use_cache,
                       int64_t cache_max_instructions, bool verify_each_step,
                       double max_op_count_growth, int64_t op_count_growth_allowance) {
             return Unwrap(VecEnvironment::Create(
                 num_envs, num_threads,
                 MakeOptions(std::move(actions), std::move(observation_spaces),
                             std::move(reward_space), traj_limit, gamma, std::move(baseline),
                             use_cache, cache_max_instructions, verify_each_step,
                             max_op_count_growth, op_count_growth_allowance),
                 EnvRegistry()));
           }),
           py::arg("num_envs"), py::arg("num_threads") = 1, HLOGYM_ENV_OPTION_ARGS,
           "Makes num_envs environments with Env's options, stepped on num_threads threads.")
      .def_property_readonly("num_envs", &VecEnvironment::num_envs, "How many environments.")
      .def(
          "env",
          [](VecEnvironment& vec, int i) -> Environment& {
            if (i < 0 || i >= vec.num_envs()) throw py::index_error("no such environment");
            return vec.env(i);
          },
          py::arg("i"), py::return_value_policy::reference_internal,
          "Environment i (owned by the VecEnv).")
      .def(
          "reset",
          [](VecEnvironment& vec, const std::vector<std::string>& benchmarks) {
            std::vector<absl::StatusOr<Observation>> results;
            {
              py::gil_scoped_release release;
              results = vec.Reset(benchmarks);
            }
            py::list out;
            for (int i = 0; i < vec.num_envs(); ++i) {
              out.append(ObservationToDict(vec.env(i), Unwrap(std::move(results[i]))));
            }
            return out;
          },
          py::arg("benchmarks"), "Resets environment i to benchmarks[i]; the observation dicts.")
      .def(
          "step",
          [](VecEnvironment& vec, const std::vector<int>& actions) {
            std::vector<absl::StatusOr<StepResult>> results;
            {
              py::gil_scoped_release release;
              results = vec.Step(actions);
            }
            py::list out;
            for (int i = 0; i < vec.num_envs(); ++i) {
              out.append(StepToTuple(vec.env(i), Unwrap(std::move(results[i]))));
            }
            return out;
          },
          py::arg("actions"), "Steps environment i with actions[i]; the step tuples, as Env.step.");
}
