#include "gym/spaces.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/opcode.h"

namespace hlogym {
namespace {

constexpr std::array<std::pair<ObservationKind, std::string_view>, 5> kObservationNames = {{
    {ObservationKind::kOpHistogram, "op_histogram"},
    {ObservationKind::kCost, "cost"},
    {ObservationKind::kAutophase, "autophase"},
    {ObservationKind::kActionHistory, "action_history"},
    {ObservationKind::kGraph, "graph"},
}};

constexpr std::array<std::pair<RewardKind, std::string_view>, 5> kRewardNames = {{
    {RewardKind::kOpCount, "op_count"},
    {RewardKind::kOpCountDecrease, "op_count_decrease"},
    {RewardKind::kOpCountDecreaseNormalized, "op_count_decrease_normalized"},
    {RewardKind::kOpCountLogRatio, "op_count_log_ratio"},
    {RewardKind::kLowestOpCountLogRatio, "lowest_op_count_log_ratio"},
}};

constexpr std::string_view kShapedSuffix = "+shaped";

enum AutophaseFeature {
  kOpCount,
  kComputations,
  kEntryInstructions,
  kMaxComputationSize,
  kParameters,
  kConstants,
  kScalarConstants,
  kElementwiseUnary,
  kElementwiseBinary,
  kElementwiseOther,
  kTranscendental,
  kCompare,
  kSelect,
  kBroadcast,
  kReshapeBitcast,
  kTranspose,
  kConvert,
  kDotConvolution,
  kReduce,
  kDataMovement,
  kGatherScatter,
  kIota,
  kRng,
  kTuple,
  kGetTupleElement,
  kControlFlow,
  kFusion,
  kCustomCall,
  kCollective,
  kCallingInstructions,
  kOperandEdges,
  kControlEdges,
  kNoUsers,
  kOneUser,
  kManyUsers,
  kThreeOrMoreOperands,
  kEntryDepth,
  kDistinctOpcodes,
  kEntryOutputElements,
  kEntryOutputBytes,
  kAutophaseCount
};

}  // namespace

std::string_view ObservationKindName(ObservationKind kind) {
  for (const auto& [k, name] : kObservationNames) {
    if (k == kind) return name;
  }
  return "?";
}

absl::StatusOr<ObservationKind> ParseObservationKind(std::string_view name) {
  for (const auto& [k, n] : kObservationNames) {
    if (n == name) return k;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown observation space '", std::string(name),
                   "'; known: ", absl::StrJoin(ObservationSpaceNames(), ", ")));
}

std::vector<std::string> ObservationSpaceNames() {
  std::vector<std::string> names;
  for (const auto& [k, n] : kObservationNames) names.emplace_back(n);
  return names;
}

absl::StatusOr<RewardSpec> ParseRewardSpace(std::string_view name) {
  RewardSpec spec;
  std::string_view base = name;
  if (base.size() > kShapedSuffix.size() &&
      base.substr(base.size() - kShapedSuffix.size()) == kShapedSuffix) {
    spec.shaped = true;
    base.remove_suffix(kShapedSuffix.size());
  }
  for (const auto& [k, n] : kRewardNames) {
    if (n == base) {
      spec.kind = k;
      return spec;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown reward space '", std::string(name),
      "'; known: ", absl::StrJoin(RewardSpaceNames(), ", "), " (each optionally with '+shaped')"));
}

std::string RewardSpaceName(const RewardSpec& spec) {
  for (const auto& [k, n] : kRewardNames) {
    if (k == spec.kind) return absl::StrCat(std::string(n), spec.shaped ? "+shaped" : "");
  }
  return "?";
}

std::vector<std::string> RewardSpaceNames() {
  std::vector<std::string> names;
  for (const auto& [k, n] : kRewardNames) names.emplace_back(n);
  return names;
}

std::vector<std::string> AutophaseFeatureNames() {
  return {"op_count",
          "computations",
          "entry_instructions",
          "max_computation_size",
          "parameters",
          "constants",
          "scalar_constants",
          "elementwise_unary",
          "elementwise_binary",
          "elementwise_other",
          "transcendental",
          "compare",
          "select",
          "broadcast",
          "reshape_bitcast",
          "transpose",
          "convert",
          "dot_convolution",
          "reduce",
          "data_movement",
          "gather_scatter",
          "iota",
          "rng",
          "tuple",
          "get_tuple_element",
          "control_flow",
          "fusion",
          "custom_call",
          "collective",
          "calling_instructions",
          "operand_edges",
          "control_edges",
          "no_users",
          "one_user",
          "many_users",
          "three_or_more_operands",
          "entry_depth",
          "distinct_opcodes",
          "entry_output_elements",
          "entry_output_bytes"};
}

std::vector<int64_t> ComputeAutophaseFeatures(const Module& module) {
  std::vector<int64_t> f(kAutophaseCount, 0);
  std::array<bool, kOpcodeCount> seen{};
  f[kComputations] = module.computation_count();
  for (const auto& computation : module.computations()) {
    f[kMaxComputationSize] = std::max(f[kMaxComputationSize], computation->instruction_count());
    const bool entry = computation.get() == module.entry_computation();
    for (const auto& owned : computation->instructions()) {
      const Instruction& inst = *owned;
      const Opcode op = inst.opcode();
      ++f[kOpCount];
      seen[static_cast<int>(op)] = true;
      if (entry) ++f[kEntryInstructions];
      if (IsElementwiseUnary(op)) {
        ++f[kElementwiseUnary];
      } else if (IsElementwiseBinary(op)) {
        ++f[kElementwiseBinary];
      } else if (IsElementwise(op)) {
        ++f[kElementwiseOther];
      }
      if (IsTranscendental(op)) ++f[kTranscendental];
      if (IsCollective(op)) ++f[kCollective];
      switch (op) {
        case Opcode::kParameter:
          ++f[kParameters];
          break;
        case Opcode::kConstant:
          ++f[kConstants];
          if (inst.shape().IsScalar()) ++f[kScalarConstants];
          break;
        case Opcode::kCompare:
          ++f[kCompare];
          break;
        case Opcode::kSelect:
          ++f[kSelect];
          break;
        case Opcode::kBroadcast:
          ++f[kBroadcast];
          break;
        case Opcode::kReshape:
        case Opcode::kBitcast:
        case Opcode::kDynamicReshape:
          ++f[kReshapeBitcast];
          break;
        case Opcode::kTranspose:
          ++f[kTranspose];
          break;
        case Opcode::kConvert:
        case Opcode::kBitcastConvert:
          ++f[kConvert];
          break;
        case Opcode::kDot:
        case Opcode::kConvolution:
        case Opcode::kRaggedDot:
        case Opcode::kScaledDot:
          ++f[kDotConvolution];
          break;
        case Opcode::kReduce:
        case Opcode::kReduceWindow:
          ++f[kReduce];
          break;
        case Opcode::kSlice:
        case Opcode::kDynamicSlice:
        case Opcode::kDynamicUpdateSlice:
        case Opcode::kConcatenate:
        case Opcode::kPad:
        case Opcode::kReverse:
        case Opcode::kCopy:
          ++f[kDataMovement];
          break;
        case Opcode::kGather:
        case Opcode::kScatter:
          ++f[kGatherScatter];
          break;
        case Opcode::kIota:
          ++f[kIota];
          break;
        case Opcode::kRng:
        case Opcode::kRngBitGenerator:
        case Opcode::kRngGetAndUpdateState:
          ++f[kRng];
          break;
        case Opcode::kTuple:
          ++f[kTuple];
          break;
        case Opcode::kGetTupleElement:
          ++f[kGetTupleElement];
          break;
        case Opcode::kWhile:
        case Opcode::kConditional:
        case Opcode::kCall:
          ++f[kControlFlow];
          break;
        case Opcode::kFusion:
          ++f[kFusion];
          break;
        case Opcode::kCustomCall:
          ++f[kCustomCall];
          break;
        default:
          break;
      }
      if (!inst.called_computations().empty()) ++f[kCallingInstructions];
      f[kOperandEdges] += inst.operand_count();
      f[kControlEdges] += static_cast<int64_t>(inst.control_predecessors().size());
      if (inst.user_count() == 0 && computation->root_instruction() != &inst) ++f[kNoUsers];
      if (inst.user_count() == 1) ++f[kOneUser];
      if (inst.user_count() >= 2) ++f[kManyUsers];
      if (inst.operand_count() >= 3) ++f[kThreeOrMoreOperands];
      if (entry && inst.shape().IsArray()) {
        f[kEntryOutputElements] += inst.shape().ElementCount();
        f[kEntryOutputBytes] += inst.shape().ByteSize();
      }
    }
  }
  if (const Computation* entry = module.entry_computation()) {
    absl::flat_hash_map<const Instruction*, int64_t> depth;
    for (const Instruction* inst : entry->MakeInstructionPostOrder()) {
      int64_t d = 0;
      for (const Instruction* operand : inst->operands()) {
        auto it = depth.find(operand);
        if (it != depth.end()) d = std::max(d, it->second + 1);
      }
      depth[inst] = d;
      f[kEntryDepth] = std::max(f[kEntryDepth], d);
    }
  }
  f[kDistinctOpcodes] = std::count(seen.begin(), seen.end(), true);
  return f;
}

std::vector<std::string> GraphNodeFeatureNames() {
  return {"opcode", "element_type",  "rank",          "dim0",       "dim1",    "dim2",
          "dim3",   "element_count", "operand_count", "user_count", "is_root", "computation_index"};
}

GraphObservation ComputeGraphObservation(const Module& module) {
  GraphObservation g;
  absl::flat_hash_map<const Instruction*, int64_t> id;
  absl::flat_hash_map<const Computation*, int64_t> computation_index;
  int64_t c = 0;
  for (const auto& computation : module.computations()) {
    computation_index[computation.get()] = c++;
    for (const auto& inst : computation->instructions()) id[inst.get()] = g.num_nodes++;
  }
  g.node_features.reserve(g.num_nodes * GraphObservation::kNodeFeatures);
  auto add_edge = [&](int64_t src, int64_t dst, int64_t kind, int64_t feature) {
    g.edge_links.push_back(src);
    g.edge_links.push_back(dst);
    g.edge_features.push_back(kind);
    g.edge_features.push_back(feature);
    ++g.num_edges;
  };
  for (const auto& computation : module.computations()) {
    const int64_t ci = computation_index[computation.get()];
    for (const auto& owned : computation->instructions()) {
      const Instruction& inst = *owned;
      const Shape& shape = inst.shape();
      g.node_features.push_back(static_cast<int64_t>(inst.opcode()));
      g.node_features.push_back(static_cast<int64_t>(shape.element_type()));
      const bool array = shape.IsArray();
      g.node_features.push_back(array ? shape.rank() : 0);
      for (int d = 0; d < 4; ++d) {
        g.node_features.push_back(array && d < shape.rank() ? shape.dimensions(d) : -1);
      }
      g.node_features.push_back(array ? shape.ElementCount() : 0);
      g.node_features.push_back(inst.operand_count());
      g.node_features.push_back(inst.user_count());
      g.node_features.push_back(computation->root_instruction() == &inst ? 1 : 0);
      g.node_features.push_back(ci);
      const int64_t self = id[&inst];
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        auto it = id.find(inst.operand(i));
        if (it != id.end()) add_edge(it->second, self, 0, i);
      }
      for (const Instruction* pred : inst.control_predecessors()) {
        auto it = id.find(pred);
        if (it != id.end()) add_edge(it->second, self, 1, 0);
      }
      for (size_t k = 0; k < inst.called_computations().size(); ++k) {
        const Computation* callee = inst.called_computations()[k];
        if (callee == nullptr || callee->root_instruction() == nullptr) continue;
        auto it = id.find(callee->root_instruction());
        if (it != id.end()) add_edge(it->second, self, 2, static_cast<int64_t>(k));
      }
    }
  }
  return g;
}

}  // namespace hlogym
