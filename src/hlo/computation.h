// Computation: a list of instructions with parameters and a root. It owns
// its instructions; the module owns it.
#ifndef HLOGYM_HLO_COMPUTATION_H_
#define HLOGYM_HLO_COMPUTATION_H_

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hlo/attributes.h"
#include "hlo/instruction.h"

namespace hlogym {

class Module;

class Computation {
 public:
  using InstructionList = std::list<std::unique_ptr<Instruction>>;

  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Module* parent() const { return parent_; }
  void set_parent(Module* parent) { parent_ = parent; }
  // When the computation joined its module, in the order XLA's own list of
  // computations keeps (creation order; the printed order sorts callees
  // first): what passes that walk XLA's list in its order need.
  int64_t creation_index() const { return creation_index_; }
  void set_creation_index(int64_t index) { creation_index_ = index; }
  bool IsEntry() const;

  // Takes ownership, assigns a module-unique id and name if the
  // instruction has none, and records parameters. Appends at the end.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  // Removes an instruction that has no users and is not the root; drops its
  // operand and control edges.
  absl::Status RemoveInstruction(Instruction* instruction);
  // Removes `instruction` and then, recursively, operands left without users
  // (never parameters or instructions with side effects).
  absl::Status RemoveInstructionAndUnusedOperands(Instruction* instruction);
  // Redirects all uses of `old_instruction` to `new_instruction` and removes
  // `old_instruction` (and any operands this leaves dead).
  absl::Status ReplaceInstruction(Instruction* old_instruction, Instruction* new_instruction);

  Instruction* root_instruction() const { return root_; }
  // Stamps the old and the new root as changed (IsRoot is part of what passes read).
  void set_root_instruction(Instruction* root);

  // Parameters by parameter number.
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  Instruction* parameter_instruction(int64_t i) const { return parameters_[i]; }
  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }

  // Instructions in insertion order (the order they were parsed or added).
  const InstructionList& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // How many instructions of `opcode` the computation holds (kept up to date by AddInstruction
  // and RemoveInstruction), so that a pass's pre-check needs no walk over the instructions.
  int64_t opcode_count(Opcode opcode) const { return opcode_counts_[static_cast<int>(opcode)]; }
  // Every instruction after all its operands and control predecessors, dead
  // instructions included, in XLA's order: a depth-first walk from each
  // instruction without users, in list order, control predecessors first,
  // then the operands in order (passes that keep the first of equal
  // instructions, like CSE, depend on it).
  std::vector<Instruction*> MakeInstructionPostOrder() const;
  // Reorders the list to MakeInstructionPostOrder().
  void SortInstructionsTopologically();

  // The computation's signature: parameter shapes and the root's shape.
  std::vector<Shape> ParameterShapes() const;

  // Attributes written after the signature, such as execution_thread="..."
  // kept verbatim.
  const std::vector<RawAttribute>& raw_attributes() const { return raw_attributes_; }
  std::vector<RawAttribute>& mutable_raw_attributes() {
    Tick();
    return raw_attributes_;
  }

  // The latest Instruction::changed_at of its instructions, or when an instruction was removed
  // or the attributes changed, whichever is later.
  uint64_t changed_at() const { return changed_at_; }
  // The computations its instructions call, each once, in the order of their first call (an
  // entry computation calls hundreds, one per reduce). Callees() keeps the list until the
  // computation changes.
  std::vector<Computation*> DistinctCallees() const;
  const std::vector<Computation*>& Callees();

 private:
  friend class Instruction;  // NoteChange ticks the clock through Tick
  friend class Module;       // Clone copies the change stamps and the callee cache
  // Advances the module's change clock and stamps this computation; returns the new time
  // (0 outside a module: AddComputation stamps everything when it joins one).
  uint64_t Tick();

  std::string name_;
  Module* parent_ = nullptr;
  int64_t creation_index_ = -1;
  InstructionList instructions_;
  std::array<int32_t, kOpcodeCount> opcode_counts_{};  // 4 bytes each: cloned with the computation
  int64_t next_instruction_index_ = 0;  // Instruction::index_in_parent_ of the next one added
  Instruction* root_ = nullptr;
  std::vector<Instruction*> parameters_;
  std::vector<RawAttribute> raw_attributes_;
  uint64_t changed_at_ = 0;
  std::vector<Computation*> callees_;
  uint64_t callees_at_ = 0;  // changed_at_ when callees_ was made; 0: never
};

}  // namespace hlogym

#endif  // HLOGYM_HLO_COMPUTATION_H_
