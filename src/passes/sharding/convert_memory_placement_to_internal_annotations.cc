#include "passes/sharding/convert_memory_placement_to_internal_annotations.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

constexpr char kPassName[] = "convert-memory-placement-to-internal-annotations";

// The internal custom-call target for a placement value, or nullopt when
// the value names no memory space this pass knows.
std::optional<std::string> InternalTarget(std::string value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  if (value == "pinned_host" || value == "unpinned_host") return "MoveToHost";
  if (value == "device") return "MoveToDevice";
  if (value == "pinned_device") return "PinToDevice";
  if (value == "vmem" || value == "device_sram") return "PinToDeviceSram";
  return std::nullopt;
}

absl::Status Error(const Instruction& instruction, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(kPassName, ": ", instruction.name(), ": ", std::string(what)));
}

struct Rewrite {
  Instruction* annotation;
  std::string target;
};

}  // namespace

bool ConvertMemoryPlacementToInternalAnnotations::MayChange(const Module& module) const {
  // Only "annotate_device_placement" custom calls are rewritten.
  return ContainsOpcode(module, {Opcode::kCustomCall});
}

absl::StatusOr<bool> ConvertMemoryPlacementToInternalAnnotations::Run(Module& module) {
  auto callers = ComputeCallers(module);
  std::vector<Rewrite> rewrites;
  // Collect and validate everything first, so bad input leaves the module
  // as it was.
  for (const auto& computation : module.computations()) {
    bool fusion_body = false;
    if (auto it = callers.find(computation.get()); it != callers.end()) {
      for (const Instruction* caller : it->second) {
        fusion_body |= caller->opcode() == Opcode::kFusion;
      }
    }
    if (fusion_body) continue;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() != Opcode::kCustomCall ||
          instruction->attrs().custom_call_target != "annotate_device_placement") {
        continue;
      }
      auto attributes = GetFrontendAttributes(*instruction);
      if (!attributes.has_value()) return Error(*instruction, "unreadable frontend_attributes");
      std::optional<std::string> target;
      for (const FrontendAttribute& attribute : *attributes) {
        if (attribute.key == "_xla_buffer_placement") target = InternalTarget(attribute.value);
      }
      if (!target.has_value()) continue;
      if (instruction->operand_count() != 1) {
        return Error(*instruction,
                     absl::StrCat("custom call \"annotate_device_placement\" must have exactly "
                                  "one operand, it has ",
                                  instruction->operand_count()));
      }
      if (!instruction->shape().Compatible(instruction->operand(0)->shape())) {
        return Error(*instruction, "the annotation's shape differs from its operand's");
      }
      rewrites.push_back({instruction, *target});
    }
  }
  for (const Rewrite& rewrite : rewrites) {
    Instruction* annotation = rewrite.annotation;
    Computation* computation = annotation->parent();
    Instruction* operand = annotation->operand(0);
    auto internal = std::make_unique<Instruction>(Opcode::kCustomCall, operand->shape());
    internal->mutable_attrs().custom_call_target = rewrite.target;
    if (const RawAttribute* sharding = annotation->attrs().FindRaw("sharding")) {
      internal->mutable_attrs().SetRaw("sharding", sharding->value);
    }
    internal->AppendOperand(operand);
    Instruction* added = computation->AddInstruction(std::move(internal));
    for (Instruction* predecessor : std::vector<Instruction*>(annotation->control_predecessors())) {
      predecessor->AddControlDependencyTo(added);
    }
    for (Instruction* successor : std::vector<Instruction*>(annotation->control_successors())) {
      added->AddControlDependencyTo(successor);
    }
    annotation->DropAllControlDeps();
    HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(annotation, added));
  }
  return !rewrites.empty();
}

}  // namespace hlogym
