// change-op-data-type: XLA's ChangeOpDataType, and the configuration XLA's
// CPU compiler runs (xla_cpu_strict_dot_conv_math off, no oneDNN; YNNPACK takes
// no f16 dot or convolution): f16 dots and convolutions compute in f32.
//
// Implements: an array-shaped, non-parameter instruction that the matcher
// accepts and whose operands all have one element type `from` with an entry
// `from -> to` gets each operand converted to `to`, is rebuilt with result
// element type `to` (by the cloner; a plain clone by default), and converted
// back to its old result type when that differs.
// Leaves out: nothing of XLA's rewrite.
#ifndef HLOGYM_PASSES_TYPES_CHANGE_OP_DATA_TYPE_H_
#define HLOGYM_PASSES_TYPES_CHANGE_OP_DATA_TYPE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hlo/opcode.h"
#include "passes/pass.h"

namespace hlogym {

class ChangeOpDataType : public Pass {
 public:
  using Matcher = std::function<bool(const Instruction*)>;
  // Builds `instruction`'s replacement with result `shape` and `operands`.
  using Cloner = std::function<absl::StatusOr<std::unique_ptr<Instruction>>(
      const Instruction* instruction, const Shape& shape,
      const std::vector<Instruction*>& operands)>;

  // `opcodes`, when not empty, lists every opcode the matcher can accept
  // (MayChange looks for them); empty means any.
  ChangeOpDataType(std::string name, std::vector<std::pair<PrimitiveType, PrimitiveType>> from_to,
                   Matcher matcher, Cloner cloner = nullptr, std::vector<Opcode> opcodes = {})
      : name_(std::move(name)),
        from_to_(std::move(from_to)),
        matcher_(std::move(matcher)),
        cloner_(std::move(cloner)),
        opcodes_(std::move(opcodes)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  std::string name_;
  std::vector<std::pair<PrimitiveType, PrimitiveType>> from_to_;
  Matcher matcher_;
  Cloner cloner_;
  std::vector<Opcode> opcodes_;
};

// XLA's CPU instance: f16 -> f32 for dots and convolutions.
std::unique_ptr<Pass> MakeCpuChangeOpDataType();

}  // namespace hlogym

#endif  // HLOGYM_PASSES_TYPES_CHANGE_OP_DATA_TYPE_H_
