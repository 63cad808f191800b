#include "passes/expanders/rng_bit_generator_expander.h"

#include <algorithm>
#include <array>
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

constexpr PrimitiveType kU32 = PrimitiveType::kU32;
constexpr PrimitiveType kU64 = PrimitiveType::kU64;

// A 128-bit counter as its u64 halves, low first.
using U128 = std::array<Instruction*, 2>;

// `value` + `addend` (a u64 scalar, or an array the sum takes the shape of),
// the carry going into the high half.
U128 AddToU128(HloEmitter& e, const U128& value, Instruction* addend) {
  Instruction* low = e.Binary(Opcode::kAdd, value[0], addend);
  Instruction* one = e.Int(kU64, 1);
  Instruction* carried = e.Less(low, value[0]);
  const std::vector<int64_t>& dims = addend->shape().dimensions();
  Instruction* high = e.Select(carried, e.Broadcast(e.Binary(Opcode::kAdd, value[1], one), dims),
                               e.Broadcast(value[1], dims));
  return {low, high};
}

// The four u32 words of a 128-bit value, least significant first.
std::array<Instruction*, 4> Words(HloEmitter& e, const U128& value) {
  return {e.Low32(value[0]), e.High32(value[0]), e.Low32(value[1]), e.High32(value[1])};
}

// The rng-bit-generator's Philox computation in the form XLA's expander
// builds it with its builder library, step for step, so that the passes after
// it see what XLA's see (the counts differ otherwise, and reshape-mover and
// the simplifier then go other ways): the counter is the state's words after
// the key reversed (u64[2]) or as they are (u64[3]), taken apart into u32
// words and joined again; each round's key is raised after it, the last
// raise read by nothing; identity slices and reshapes and scalar broadcasts
// stay for later passes to remove. Returns the new state and the bits (u32
// for types of 32 bits or fewer, converted afterwards; else u64), laid out
// in `dims`.
std::pair<Instruction*, Instruction*> EmitXlaPhilox(HloEmitter& e, Instruction* state,
                                                    const std::vector<int64_t>& dims, bool wide) {
  const int64_t words = state->shape().dimensions(0);
  Instruction* key = e.Reshape(e.Slice(state, {0}, {1}), {});
  Instruction* counter = words >= 3 ? e.Slice(state, {1}, {3}) : e.Unary(Opcode::kReverse, state);
  if (words < 3) counter->mutable_attrs().dimensions = {0};
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::array<Instruction*, 2> k = {e.Low32(key), e.High32(key)};

  // Blocks of four u32 words: the counter + i for block i, and the counter
  // after the last block.
  const int64_t blocks = wide ? (2 * n + 3) / 4 : (n + 3) / 4;
  const std::array<Instruction*, 4> start = Words(
      e, {e.Reshape(e.Slice(counter, {0}, {1}), {}), e.Reshape(e.Slice(counter, {1}, {2}), {})});
  Instruction* iota = e.Iota(kU64, blocks);
  const U128 joined = {e.Join64(start[0], start[1]), e.Join64(start[2], start[3])};
  std::array<Instruction*, 4> x = Words(e, AddToU128(e, joined, iota));
  const U128 next = AddToU128(e, joined, e.Int(kU64, blocks));
  Instruction* new_counter = e.Concatenate({e.Reshape(next[0], {1}), e.Reshape(next[1], {1})}, 0);

  for (int round = 0; round < 10; ++round) {
    auto multiplied = [&](Instruction* word, uint32_t factor) {
      Instruction* product =
          e.Binary(Opcode::kMultiply, e.Convert(word, kU64), e.Int(kU64, factor));
      Instruction* low = e.Convert(product, kU32);
      return std::pair{e.High32(product), low};
    };
    const auto [high0, low0] = multiplied(x[0], 0xD2511F53u);
    const auto [high1, low1] = multiplied(x[2], 0xCD9E8D57u);
    x = {e.Binary(Opcode::kXor, e.Binary(Opcode::kXor, high1, x[1]), k[0]), low1,
         e.Binary(Opcode::kXor, e.Binary(Opcode::kXor, high0, x[3]), k[1]), low0};
    k = {e.Binary(Opcode::kAdd, k[0], e.Int(kU32, 0x9E3779B9u)),
         e.Binary(Opcode::kAdd, k[1], e.Int(kU32, 0xBB67AE85u))};
  }

  std::vector<Instruction*> parts =
      wide ? std::vector<Instruction*>{e.Join64(x[0], x[1]), e.Join64(x[2], x[3])}
           : std::vector<Instruction*>{x[0], x[1], x[2], x[3]};
  const int64_t rows = wide ? (n + 1) / 2 : blocks;
  std::vector<Instruction*> columns;
  for (Instruction* part : parts) columns.push_back(e.Reshape(part, {rows, 1}));
  Instruction* flat =
      e.Reshape(e.Concatenate(columns, 1), {rows * static_cast<int64_t>(parts.size())});
  Instruction* bits = e.Reshape(e.Slice(flat, {0}, {n}, /*keep_identity=*/true), dims,
                                /*keep_identity=*/true);
  if (words < 3) new_counter = e.Slice(new_counter, {0}, {1});
  return {e.Concatenate({e.Reshape(key, {1}), new_counter}, 0), bits};
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
  Instruction* new_state = nullptr;
  Instruction* bits = nullptr;
  if (algorithm == RandomAlgorithm::kThreeFry) {
    Instruction* key = e.Element(state, 0);
    Instruction* new_key = e.Reshape(key, {1});
    EmittedBits out = EmitThreeFryBits(e, key, e.Element(state, 1), dims, wide);
    bits = out.bits;
    new_state = e.Concatenate({new_key, e.Reshape(out.counter_lo, {1})}, 0);
  } else {
    std::tie(new_state, bits) = EmitXlaPhilox(e, state, dims, wide);
  }
  bits = e.Convert(bits, type);  // narrower types keep the low bits
  Instruction* root = e.Tuple({new_state, bits});
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
