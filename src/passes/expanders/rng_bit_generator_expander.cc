#include "passes/expanders/rng_bit_generator_expander.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/expanders/prng_hlo.h"

namespace hlogym {
namespace {

// Checks what the generator computation supports; InvalidArgument otherwise.
absl::Status CheckSupported(const Instruction& rng, RandomAlgorithm algorithm) {
  const Shape& shape = rng.shape();
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(rng.name(), ": rng-bit-generator ", why));
  };
  if (rng.operand_count() != 1 || !shape.IsTuple() || shape.tuple_shapes_size() != 2) {
    return bad("must have one operand and a (state, bits) tuple result");
  }
  const Shape& state = rng.operand(0)->shape();
  const int64_t max_words = algorithm == RandomAlgorithm::kThreeFry ? 2 : 3;
  if (!state.IsArray() || state.element_type() != PrimitiveType::kU64 || state.rank() != 1 ||
      state.dimensions(0) < 2 || state.dimensions(0) > max_words ||
      state.dimensions() != shape.tuple_shapes(0).dimensions()) {
    return bad(absl::StrCat("state must be u64[2]", max_words == 3 ? " or u64[3]" : "",
                            " for this algorithm"));
  }
  const Shape& bits = shape.tuple_shapes(1);
  if (!bits.IsArray() || !IsIntegralType(bits.element_type()) ||
      BitWidth(bits.element_type()) < 8 ||
      std::any_of(bits.dimensions().begin(), bits.dimensions().end(),
                  [](int64_t d) { return d < 0; })) {
    return bad("bits must be a static array of 8, 16, 32 or 64-bit integers");
  }
  return absl::OkStatus();
}

// The computation (state) -> (new state, bits) for `rng`.
Computation* BuildGenerator(Module& module, const Instruction& rng, RandomAlgorithm algorithm) {
  const Shape& state_shape = rng.operand(0)->shape();
  const Shape& bits_shape = rng.shape().tuple_shapes(1);
  const bool layout = state_shape.has_layout() || bits_shape.has_layout();
  auto owned = std::make_unique<Computation>(
      module.UniqueName(algorithm == RandomAlgorithm::kThreeFry ? "rng_three_fry" : "rng_philox"));
  owned->set_parent(&module);
  HloEmitter e(owned.get(), layout);
  Shape param_shape = state_shape;
  if (layout && !param_shape.has_layout()) param_shape.SetDefaultLayout();
  Instruction* state = e.Parameter(0, param_shape, "state");
  const std::vector<int64_t> dims = bits_shape.dimensions();
  const PrimitiveType type = bits_shape.element_type();
  const bool wide = BitWidth(type) == 64;
  const int64_t words = state_shape.dimensions(0);
  Instruction* key = e.Element(state, 0);
  std::vector<Instruction*> new_state = {e.Reshape(key, {1})};
  Instruction* bits = nullptr;
  if (algorithm == RandomAlgorithm::kThreeFry) {
    EmittedBits out = EmitThreeFryBits(e, key, e.Element(state, 1), dims, wide);
    bits = out.bits;
    new_state.push_back(e.Reshape(out.counter_lo, {1}));
  } else {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    // XLA splits each state word into its u32 halves while still a u64[1] slice, and joins
    // the counter's words back from them; the simplifier cannot fold that round trip, so it
    // stays in XLA's module (14 instructions per generator) and in this one.
    auto halves = [&](int64_t i) {
      Instruction* word = e.Slice(state, {i}, {i + 1});
      return std::pair{e.Low32(word), e.High32(word)};
    };
    auto joined = [&](const std::pair<Instruction*, Instruction*>& h) {
      return e.Reshape(e.Join64(h.first, h.second), {});
    };
    const auto key_halves = halves(0);
    // A u64[2] state's counter is (state[1], state[0]); u64[3]: (state[1], state[2]).
    Instruction* lo = joined(halves(1));
    Instruction* hi = joined(words == 3 ? halves(2) : key_halves);
    EmittedBits out = EmitPhiloxBits(e, e.Reshape(key_halves.first, {}),
                                     e.Reshape(key_halves.second, {}), lo, hi, n, wide);
    bits = e.Reshape(out.bits, dims);
    new_state.push_back(e.Reshape(out.counter_lo, {1}));
    if (words == 3) new_state.push_back(e.Reshape(out.counter_hi, {1}));
  }
  bits = e.Convert(bits, type);  // narrower types keep the low bits
  Instruction* root = e.Tuple({e.Concatenate(new_state, 0), bits});
  root->set_shape(rng.shape());
  owned->set_root_instruction(root);
  return module.AddComputation(std::move(owned));
}

}  // namespace

absl::StatusOr<bool> RngBitGeneratorExpander::Run(Module& module) {
  std::vector<Instruction*> rngs;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kRngBitGenerator) rngs.push_back(instruction.get());
    }
  }
  for (Instruction* rng : rngs) {
    HLOGYM_RETURN_IF_ERROR(CheckSupported(*rng, ResolveRngAlgorithm(rng->attrs().rng_algorithm)));
  }
  // One generator per (algorithm, state shape, bits shape), as XLA caches them.
  std::map<std::string, Computation*> cache;
  for (Instruction* rng : rngs) {
    const RandomAlgorithm algorithm = ResolveRngAlgorithm(rng->attrs().rng_algorithm);
    const std::string key =
        absl::StrCat(static_cast<int>(algorithm), "|", rng->operand(0)->shape().ToString(), "|",
                     rng->shape().ToString());
    Computation*& generator = cache[key];
    if (generator == nullptr) generator = BuildGenerator(module, *rng, algorithm);
    Computation* parent = rng->parent();
    auto call = std::make_unique<Instruction>(Opcode::kCall, rng->shape());
    call->AppendOperand(rng->operand(0));
    call->mutable_called_computations().push_back(generator);
    Instruction* added = parent->AddInstruction(std::move(call));
    for (Instruction* pred : rng->control_predecessors()) pred->AddControlDependencyTo(added);
    for (Instruction* succ : rng->control_successors()) added->AddControlDependencyTo(succ);
    rng->DropAllControlDeps();
    HLOGYM_RETURN_IF_ERROR(parent->ReplaceInstruction(rng, added));
  }
  if (!rngs.empty()) module.SortComputationsCalleesFirst();
  return !rngs.empty();
}

bool RngBitGeneratorExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kRngBitGenerator});
}

}  // namespace hlogym
