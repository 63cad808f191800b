#include "analysis/cost_analysis.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"

namespace hlogym {
namespace {

// Elements of an array shape, or of the first array in a tuple (the
// variadic reduce and sort results).
double ElementsOf(const Shape& shape) {
  if (shape.IsTuple()) {
    return shape.tuple_shapes().empty() ? 0 : ElementsOf(shape.tuple_shapes(0));
  }
  return shape.IsArray() ? static_cast<double>(shape.ElementCount()) : 0;
}

double Dimension(const Shape& shape, int64_t dimension) {
  if (!shape.IsArray() || dimension < 0 || dimension >= shape.rank()) return 1;
  return static_cast<double>(shape.dimensions(dimension));
}

class CostCalculator {
 public:
  CostFeatures ComputationCost(const Computation* computation) {
    if (computation == nullptr) return {};
    auto it = memo_.find(computation);
    if (it != memo_.end()) return it->second;
    memo_[computation] = CostFeatures{};  // breaks call cycles in malformed input
    CostFeatures total;
    for (const auto& instruction : computation->instructions()) {
      total += InstructionCost(*instruction);
    }
    memo_[computation] = total;
    return total;
  }

  CostFeatures InstructionCost(const Instruction& instruction) {
    CostFeatures cost;
    const Shape& shape = instruction.shape();
    const Opcode opcode = instruction.opcode();
    switch (opcode) {
      case Opcode::kParameter:
      case Opcode::kConstant:
      case Opcode::kTuple:
      case Opcode::kGetTupleElement:
      case Opcode::kBitcast:
      case Opcode::kAfterAll:
      case Opcode::kAddDependency:
        return cost;  // no data moved
      default:
        break;
    }
    cost.bytes_accessed = static_cast<double>(shape.ByteSize());
    for (const Instruction* operand : instruction.operands()) {
      cost.bytes_accessed += static_cast<double>(operand->shape().ByteSize());
    }

    const auto& callees = instruction.called_computations();
    auto per_application = [&](double applications) {
      if (callees.empty()) return;
      CostFeatures applied = ComputationCost(callees[0]);
      cost.flops += applications * applied.flops;
      cost.transcendentals += applications * applied.transcendentals;
    };

    if (IsElementwise(opcode)) {
      (IsTranscendental(opcode) ? cost.transcendentals : cost.flops) = ElementsOf(shape);
      return cost;
    }
    switch (opcode) {
      case Opcode::kDot:
      case Opcode::kRaggedDot:
      case Opcode::kScaledDot: {
        double contracted = 1;
        const auto& dnums = instruction.attrs().dot_dimension_numbers;
        if (dnums.has_value() && instruction.operand_count() > 0) {
          for (int64_t d : dnums->lhs_contracting_dimensions) {
            contracted *= Dimension(instruction.operand(0)->shape(), d);
          }
        }
        cost.flops = 2 * ElementsOf(shape) * contracted;
        break;
      }
      case Opcode::kConvolution: {
        const auto& dnums = instruction.attrs().convolution_dimension_numbers;
        double per_output = 1;
        if (dnums.has_value() && instruction.operand_count() > 1) {
          const Shape& kernel = instruction.operand(1)->shape();
          per_output = Dimension(kernel, dnums->kernel_input_feature_dimension);
          for (int64_t d : dnums->kernel_spatial_dimensions) per_output *= Dimension(kernel, d);
        }
        cost.flops = 2 * ElementsOf(shape) * per_output;
        break;
      }
      case Opcode::kReduce: {
        double inputs =
            instruction.operand_count() > 0 ? ElementsOf(instruction.operand(0)->shape()) : 0;
        per_application(std::max(0.0, inputs - ElementsOf(shape)));
        break;
      }
      case Opcode::kReduceWindow: {
        double window = 1;
        if (instruction.attrs().window.has_value()) {
          for (const auto& d : instruction.attrs().window->dimensions) window *= d.size;
        }
        per_application(ElementsOf(shape) * std::max(0.0, window - 1));
        break;
      }
      case Opcode::kMap:
        per_application(ElementsOf(shape));
        break;
      case Opcode::kSort: {
        double n = ElementsOf(shape);
        per_application(n > 1 ? n * std::log2(n) : 0);
        break;
      }
      case Opcode::kScatter: {
        double updates =
            instruction.operand_count() > 2
                ? ElementsOf(instruction.operand(instruction.operand_count() - 1)->shape())
                : 0;
        per_application(updates);
        break;
      }
      case Opcode::kSelectAndScatter: {
        double source =
            instruction.operand_count() > 1 ? ElementsOf(instruction.operand(1)->shape()) : 0;
        double window = 1;
        if (instruction.attrs().window.has_value()) {
          for (const auto& d : instruction.attrs().window->dimensions) window *= d.size;
        }
        if (!callees.empty()) {
          CostFeatures select = ComputationCost(callees[0]);
          cost.flops += source * window * select.flops;
        }
        if (callees.size() > 1) cost.flops += source * ComputationCost(callees[1]).flops;
        break;
      }
      case Opcode::kConditional: {
        CostFeatures most_expensive;
        for (const Computation* branch : callees) {
          CostFeatures branch_cost = ComputationCost(branch);
          if (branch_cost.flops + branch_cost.transcendentals >
              most_expensive.flops + most_expensive.transcendentals) {
            most_expensive = branch_cost;
          }
        }
        cost += most_expensive;
        break;
      }
      case Opcode::kFusion:
      case Opcode::kCall:
      case Opcode::kWhile:
      case Opcode::kAsyncStart:
      case Opcode::kCustomCall: {
        for (const Computation* callee : callees) {
          CostFeatures callee_cost = ComputationCost(callee);
          cost.flops += callee_cost.flops;
          cost.transcendentals += callee_cost.transcendentals;
          // A fusion's inner values stay in registers; only its boundary
          // counts. Real calls and loops do touch their callees' buffers.
          if (opcode != Opcode::kFusion) cost.bytes_accessed += callee_cost.bytes_accessed;
        }
        break;
      }
      default:
        break;
    }
    return cost;
  }

 private:
  absl::flat_hash_map<const Computation*, CostFeatures> memo_;
};

}  // namespace

CostFeatures ComputeModuleCost(const Module& module) {
  CostCalculator calculator;
  return calculator.ComputationCost(module.entry_computation());
}

CostFeatures ComputeInstructionCost(const Instruction& instruction) {
  CostCalculator calculator;
  return calculator.InstructionCost(instruction);
}

}  // namespace hlogym
