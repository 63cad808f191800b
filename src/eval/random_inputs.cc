#include "eval/random_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "eval/value.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {

using eval::Mix64;

bool IsIndexOperand(const Instruction& user, int64_t operand_index) {
  switch (user.opcode()) {
    case Opcode::kGather:
      return operand_index == 1;
    case Opcode::kDynamicSlice:
      return operand_index >= 1;
    case Opcode::kDynamicUpdateSlice:
      return operand_index >= 2;
    case Opcode::kScatter:
      return operand_index == (user.operand_count() - 1) / 2;
    default:
      return false;
  }
}

// The smallest dimension (>= 1) of what `user` indexes into.
int64_t IndexBound(const Instruction& user) {
  const Shape& s = user.operand(0)->shape();
  int64_t bound = std::numeric_limits<int64_t>::max();
  if (s.IsArray()) {
    for (int64_t d : s.dimensions()) {
      if (d >= 1) bound = std::min(bound, d);
    }
  }
  return bound == std::numeric_limits<int64_t>::max() ? 1 : bound;
}

// The call and fusion instructions that call each computation.
absl::flat_hash_map<const Computation*, std::vector<const Instruction*>> CallSites(
    const Module& module) {
  absl::flat_hash_map<const Computation*, std::vector<const Instruction*>> sites;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if ((instruction->opcode() == Opcode::kCall || instruction->opcode() == Opcode::kFusion) &&
          instruction->to_apply() != nullptr) {
        sites[instruction->to_apply()].push_back(instruction.get());
      }
    }
  }
  return sites;
}

// Walks the uses of `start` forward, to depth 24: into the parameters of
// called computations (call, fusion) and out of them again (a value that
// reaches a called computation's root, or element k of a root tuple, goes on
// at the caller, or at the caller's get-tuple-elements of index k: XLA's
// optimized modules pass values from fusion to fusion), into while loops
// (element k of a loop's initial tuple goes on at the
// get-tuple-elements of index k of its body's and condition's parameter and of
// the loop's result: lax.scan's state), and through every user for which
// `follows(user, operand_index)` holds. `visit(user, operand_index)` sees each
// use first; returning true ends the walk.
template <typename Follows, typename Visit>
void WalkUses(const Instruction* start, Follows follows, Visit visit) {
  std::vector<std::pair<const Instruction*, int>> stack = {{start, 0}};
  absl::flat_hash_map<const Instruction*, bool> seen;
  std::optional<absl::flat_hash_map<const Computation*, std::vector<const Instruction*>>> sites;
  auto walk_out = [&](const Instruction* instr, int depth) {
    const Computation* computation = instr->parent();
    if (computation == nullptr || computation->IsEntry()) return;
    const Instruction* root = computation->root_instruction();
    int64_t tuple_index = -1;
    if (instr != root) {
      if (root == nullptr || root->opcode() != Opcode::kTuple) return;
      auto it = std::find(root->operands().begin(), root->operands().end(), instr);
      if (it == root->operands().end()) return;
      tuple_index = it - root->operands().begin();
    }
    if (!sites) sites = CallSites(*computation->parent());
    auto found = sites->find(computation);
    if (found == sites->end()) return;
    for (const Instruction* caller : found->second) {
      if (tuple_index < 0) {
        stack.push_back({caller, depth + 1});
        continue;
      }
      for (const Instruction* user : caller->users()) {
        if (user->opcode() == Opcode::kGetTupleElement &&
            user->attrs().tuple_index == tuple_index) {
          stack.push_back({user, depth + 1});
        }
      }
    }
  };
  auto push_element = [&](const Instruction* tuple, int64_t k, int depth) {
    for (const Instruction* user : tuple->users()) {
      if (user->opcode() == Opcode::kGetTupleElement && user->attrs().tuple_index == k) {
        stack.push_back({user, depth});
      }
    }
  };
  auto walk_into_loops = [&](const Instruction* tuple, int64_t k, int depth) {
    for (const Instruction* loop : tuple->users()) {
      if (loop->opcode() != Opcode::kWhile || loop->called_computations().size() != 2) continue;
      for (const Computation* computation : loop->called_computations()) {
        if (computation->num_parameters() == 1) {
          push_element(computation->parameter_instruction(0), k, depth);
        }
      }
      push_element(loop, k, depth);
    }
  };
  while (!stack.empty()) {
    auto [instr, depth] = stack.back();
    stack.pop_back();
    if (seen[instr] || depth > 24) continue;
    seen[instr] = true;
    walk_out(instr, depth);
    for (const Instruction* user : instr->users()) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) != instr) continue;
        if (visit(*user, i)) return;
        if (user->opcode() == Opcode::kCall || user->opcode() == Opcode::kFusion) {
          if (!user->called_computations().empty() &&
              i < user->called_computations()[0]->num_parameters()) {
            stack.push_back({user->called_computations()[0]->parameter_instruction(i), depth + 1});
          }
        } else if (user->opcode() == Opcode::kTuple) {
          walk_into_loops(user, i, depth + 1);
        } else if (follows(*user, i)) {
          stack.push_back({user, depth + 1});
        }
      }
    }
  }
}

// Ops a parameter's value passes through unchanged in kind (shape ops,
// converts, adds), for both walks below.
bool PassesValueThrough(Opcode opcode) {
  switch (opcode) {
    case Opcode::kConvert:
    case Opcode::kReshape:
    case Opcode::kBroadcast:
    case Opcode::kBitcast:
    case Opcode::kCopy:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kTranspose:
    case Opcode::kAdd:
    case Opcode::kDynamicSlice:
      return true;
    default:
      return false;
  }
}

// The number of classes when `compare` tests a value against an iota (seen
// through broadcasts, reshapes, converts and copies), as one-hot encodings and
// TensorFlow's sparse cross-entropy do with a label; 0 otherwise.
int64_t OneHotBound(const Instruction& compare, int64_t operand_index) {
  if (compare.opcode() != Opcode::kCompare) return 0;
  const Instruction* other = compare.operand(1 - operand_index);
  while (other->opcode() == Opcode::kBroadcast || other->opcode() == Opcode::kReshape ||
         other->opcode() == Opcode::kConvert || other->opcode() == Opcode::kCopy) {
    other = other->operand(0);
  }
  if (other->opcode() != Opcode::kIota || !other->shape().IsArray()) return 0;
  return std::max<int64_t>(1, other->shape().dimensions(other->attrs().iota_dimension));
}

// The smallest index bound among index operands (and iotas a value is
// compared with) reachable from `start` through elementwise/shape ops, the
// values a gather picks, called computations and while loops; 0 if none. A
// reinforcement-learning update scans over shuffled minibatches (x[order] is a
// gather of x) of the actions it took, then picks each action's
// log-probability with take_along_axis, which fills NaN for an action out of
// range: every output was NaN when actions were drawn up to 7 for 2 of them.
int64_t FindIndexBound(const Instruction* start) {
  int64_t bound = 0;
  WalkUses(
      start,
      [](const Instruction& user, int64_t i) {
        return !IsIndexOperand(user, i) &&
               (PassesValueThrough(user.opcode()) || user.opcode() == Opcode::kSelect ||
                user.opcode() == Opcode::kClamp || user.opcode() == Opcode::kGather);
      },
      [&](const Instruction& user, int64_t i) {
        const int64_t b = IsIndexOperand(user, i) ? IndexBound(user) : OneHotBound(user, i);
        if (b > 0) bound = bound == 0 ? b : std::min(bound, b);
        return false;
      });
  return bound;
}

// Whether operand `operand_index` of `user` only makes sense positive: the
// operand of sqrt, rsqrt or log, a divisor, the base of a power, the variance
// of a batch norm (PyTorch/XLA's inference graphs take the running variance
// as a parameter).
bool IsPositiveOnlyOperand(const Instruction& user, int64_t operand_index) {
  switch (user.opcode()) {
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kLog:
      return true;
    case Opcode::kDivide:
      return operand_index == 1;
    case Opcode::kPower:
      return operand_index == 0;
    case Opcode::kBatchNormInference:
      return operand_index == 4;
    case Opcode::kBatchNormGrad:
      return operand_index == 3;
    default:
      return false;
  }
}

// Whether `start` reaches a positive-only operand through elementwise/shape
// ops, products and dividends, and into called computations: a variance, a
// scale or a norm, which is positive in the model and makes every output NaN
// when drawn negative (batch-norm inference; Adam's second moment, scaled by
// beta2 before its square root).
bool FeedsPositiveOnlyOp(const Instruction* start) {
  bool found = false;
  WalkUses(
      start,
      [](const Instruction& user, int64_t i) {
        return PassesValueThrough(user.opcode()) || user.opcode() == Opcode::kMultiply ||
               (user.opcode() == Opcode::kDivide && i == 0);
      },
      [&](const Instruction& user, int64_t i) {
        found = IsPositiveOnlyOperand(user, i);
        return found;
      });
  return found;
}

// Whether an integer parameter reaches the divisor of a division or a
// remainder through converts, bit casts, shape ops, sums and the left side of
// a difference: the bound of torch.randint (PyTorch/XLA passes it as a
// parameter, and takes the drawn bits modulo high - low), which a draw of 0
// turned into a division by zero and every label, and the loss, into garbage.
bool FeedsIntegerDivisor(const Instruction* start) {
  bool found = false;
  WalkUses(
      start,
      [](const Instruction& user, int64_t i) {
        return PassesValueThrough(user.opcode()) || user.opcode() == Opcode::kBitcastConvert ||
               (user.opcode() == Opcode::kSubtract && i == 0);
      },
      [&](const Instruction& user, int64_t i) {
        found = i == 1 && (user.opcode() == Opcode::kRemainder || user.opcode() == Opcode::kDivide);
        return found;
      });
  return found;
}

// The number of products each output element of `user` sums when operand
// `operand_index` is contracted: the contracting sizes of a dot, the kernel's
// input features times its window for a convolution; 0 for other ops.
int64_t FanIn(const Instruction& user, int64_t operand_index) {
  int64_t fan_in = 1;
  if (user.opcode() == Opcode::kDot && user.attrs().dot_dimension_numbers.has_value()) {
    const DotDimensionNumbers& dims = *user.attrs().dot_dimension_numbers;
    const Shape& shape = user.operand(operand_index)->shape();
    for (int64_t d :
         operand_index == 0 ? dims.lhs_contracting_dimensions : dims.rhs_contracting_dimensions) {
      if (d >= 0 && d < shape.rank()) fan_in *= shape.dimensions()[d];
    }
    return fan_in;
  }
  if (user.opcode() == Opcode::kConvolution && user.operand_count() == 2 &&
      user.attrs().convolution_dimension_numbers.has_value()) {
    const ConvolutionDimensionNumbers& dims = *user.attrs().convolution_dimension_numbers;
    const Shape& kernel = user.operand(1)->shape();
    if (dims.kernel_input_feature_dimension < kernel.rank()) {
      fan_in *= kernel.dimensions()[dims.kernel_input_feature_dimension];
    }
    for (int64_t d : dims.kernel_spatial_dimensions) {
      if (d >= 0 && d < kernel.rank()) fan_in *= kernel.dimensions()[d];
    }
    return fan_in;
  }
  return 0;
}

// The largest fan-in of a dot or convolution that `start` reaches as an
// operand through value-preserving ops and into called computations; 0 if
// none. A weight drawn from [-1, 1] multiplies the scale of every layer by
// about sqrt(fan-in / 3): deep nets then overflow (or amplify rounding until
// nothing can be compared), which initializers avoid by scaling to fan-in.
int64_t FindFanIn(const Instruction* start) {
  int64_t fan_in = 0;
  WalkUses(
      start, [](const Instruction& user, int64_t) { return PassesValueThrough(user.opcode()); },
      [&](const Instruction& user, int64_t i) {
        fan_in = std::max(fan_in, FanIn(user, i));
        return false;
      });
  return fan_in;
}

void FillLiteral(Literal& literal, uint64_t seed, double lo, double hi, int64_t ilo, int64_t ihi) {
  if (literal.shape().IsTuple()) {
    for (size_t i = 0; i < literal.mutable_tuple_elements().size(); ++i) {
      FillLiteral(literal.mutable_tuple_elements()[i], Mix64(seed + i + 1), lo, hi, ilo, ihi);
    }
    return;
  }
  if (!literal.shape().IsArray()) return;
  auto value = eval::NewArray(literal.shape());
  eval::FillDeterministic(*value, seed, lo, hi, ilo, ihi);
  if (value->size_bytes > 0 &&
      literal.mutable_raw().size() == static_cast<size_t>(value->size_bytes)) {
    std::memcpy(literal.mutable_raw().data(), value->bytes(), value->size_bytes);
  }
}

}  // namespace

absl::StatusOr<std::vector<Literal>> MakeRandomArguments(const Module& module, uint64_t seed,
                                                         const RandomInputOptions& options) {
  std::vector<Literal> arguments;
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) return arguments;
  int64_t total = 0;
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    const Instruction* param = entry->parameter_instruction(p);
    const std::optional<int64_t> bytes = param->shape().CheckedByteSize();
    if (!bytes || __builtin_add_overflow(total, *bytes, &total)) {
      total = std::numeric_limits<int64_t>::max();
    }
    HLOGYM_RETURN_IF_ERROR(CheckMemoryFor(total, options.max_bytes, [&] {
      return absl::StrCat("parameter ", param->name(), " (", param->shape().ToString(false), ")",
                          p > 0 ? ", with the ones before it," : "");
    }));
  }
  const double lo = options.positive_floats ? 0.5 : options.float_low;
  const double hi = options.positive_floats ? 1.5 : options.float_high;
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    const Instruction* param = entry->parameter_instruction(p);
    Shape shape = param->shape();
    Literal literal(shape);
    const uint64_t param_seed = Mix64(Mix64(seed) ^ (static_cast<uint64_t>(p) * 0x100000001b3ULL) ^
                                      (static_cast<uint64_t>(shape.element_type()) << 56));
    int64_t ilo = options.int_low, ihi = options.int_high;
    if (shape.IsArray() && (IsIntegralType(shape.element_type()))) {
      const int64_t bound = FindIndexBound(param);
      if (bound > 0) {
        ilo = 0;
        ihi = bound - 1;
      } else if (ilo < 1 && ihi >= 1 && FeedsIntegerDivisor(param)) {
        ilo = 1;
      }
    }
    double flo = lo, fhi = hi;
    if (shape.IsArray() && IsFloatingPointType(shape.element_type())) {
      if (shape.rank() == 0 || FeedsPositiveOnlyOp(param)) {
        flo = 0.5;
        fhi = 1.5;
      } else if (const int64_t fan_in = FindFanIn(param); fan_in > 3 && !options.positive_floats) {
        // LeCun-uniform scale: variance 1/fan-in, so a layer keeps its input's scale.
        const double scale = std::sqrt(3.0 / static_cast<double>(fan_in));
        flo = lo * scale;
        fhi = hi * scale;
      }
    }
    FillLiteral(literal, param_seed, flo, fhi, ilo, ihi);
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

}  // namespace hlogym
