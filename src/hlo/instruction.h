// Instruction: one HLO operation. Its computation owns it. It holds its shape
// and attributes copy-on-write (clones share them until one is written), so
// a reference from mutable_shape() or mutable_attrs() is good only until the
// instruction is cloned. Operand, user and control edges are kept consistent
// by the mutators below, so always edit edges through them.
#ifndef HLOGYM_HLO_INSTRUCTION_H_
#define HLOGYM_HLO_INSTRUCTION_H_

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hlo/attributes.h"
#include "hlo/copy_on_write.h"
#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace hlogym {

class Computation;

// The opcode-specific attributes, typed where passes or the verifier read
// them. Only the fields that belong to the instruction's opcode are
// meaningful; the printer writes just those. Everything hlogym does not model
// (metadata, sharding, backend_config, frontend_attributes, replica_groups,
// channel_id, ...) is kept verbatim, in order, in `raw`.
struct InstructionAttributes {
  int64_t parameter_number = 0;  // parameter(N)
  int64_t tuple_index = 0;       // get-tuple-element: index=
  int64_t iota_dimension = 0;    // iota
  // broadcast, transpose, reduce, reverse, concatenate, sort, map,
  // all-gather, all-to-all, reduce-scatter, get/set-dimension-size, ...
  std::vector<int64_t> dimensions;
  // Whether `dimensions=` was written where it is optional (map, all-to-all);
  // false where it is required (RequiresDimensionsAttribute), so that parsed
  // and pass-built instructions compare equal.
  bool has_dimensions = false;
  std::vector<SliceDimension> slice;         // slice
  std::vector<int64_t> dynamic_slice_sizes;  // dynamic-slice
  std::vector<PaddingDimension> padding;     // pad
  std::optional<Window> window;              // convolution, reduce-window, ...
  std::optional<ConvolutionDimensionNumbers> convolution_dimension_numbers;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::optional<DotDimensionNumbers> dot_dimension_numbers;
  std::optional<RaggedDotDimensionNumbers> ragged_dot_dimension_numbers;
  std::vector<Precision> operand_precision;  // empty when not written
  std::optional<GatherDimensionNumbers> gather_dimension_numbers;
  std::vector<int64_t> gather_slice_sizes;
  std::optional<ScatterDimensionNumbers> scatter_dimension_numbers;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;
  ComparisonType comparison_type = ComparisonType::kUnset;
  FusionKind fusion_kind = FusionKind::kLoop;
  std::string custom_call_target;
  RandomDistribution rng_distribution = RandomDistribution::kUniform;
  RandomAlgorithm rng_algorithm = RandomAlgorithm::kDefault;
  int64_t exponent_bits = 0;  // reduce-precision
  int64_t mantissa_bits = 0;
  FftType fft_type = FftType::kFft;
  std::vector<int64_t> fft_length;
  bool left_side = false;  // triangular-solve
  bool lower = false;      // triangular-solve, cholesky
  bool unit_diagonal = false;
  TriangularSolveTranspose transpose_a = TriangularSolveTranspose::kNoTranspose;
  float epsilon = 0;          // batch-norm-*
  int64_t feature_index = 0;  // batch-norm-*
  bool is_stable = false;     // sort
  int64_t k = 0;              // topk
  bool largest = true;        // topk
  // The value of a constant; shared because clones never mutate it.
  std::shared_ptr<const Literal> literal;
  std::vector<RawAttribute> raw;

  // The raw attribute `key`, or nullptr.
  const RawAttribute* FindRaw(std::string_view key) const;
  void SetRaw(std::string_view key, std::string value);  // replaces or appends
  bool EraseRaw(std::string_view key);
};

class Instruction {
 public:
  Instruction(Opcode opcode, Shape shape, std::string name = "");
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  Opcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Unique within the module; assigned when added to a computation.
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  const Shape& shape() const { return shape_.get(); }
  Shape& mutable_shape() {
    NoteChange();
    return shape_.mutable_get();
  }
  void set_shape(Shape shape) {
    NoteChange();
    shape_.set(std::move(shape));
  }

  const InstructionAttributes& attrs() const { return attrs_.get(); }
  InstructionAttributes& mutable_attrs() {
    NoteChange();
    return attrs_.mutable_get();
  }

  // When this instruction last changed, on its module's change clock (Module::change_clock):
  // added, or its operands, users, control edges, shape, attributes, called computations or
  // being the root changed (the mutable_ accessors count as a change). Lets a pass skip what it
  // has seen unchanged before (passes/change_tracking.h).
  uint64_t changed_at() const { return changed_at_; }

  Computation* parent() const { return parent_; }
  void set_parent(Computation* parent) { parent_ = parent; }

  // Operands (data inputs), in order.
  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  void AppendOperand(Instruction* operand);
  // Replaces operand i, updating user lists.
  void ReplaceOperandWith(int64_t i, Instruction* new_operand);
  // Replaces every occurrence of `old_operand` among the operands.
  void ReplaceUsesOfOperand(Instruction* old_operand, Instruction* new_operand);
  // Drops every operand (and this instruction from their user lists).
  void DetachOperands();

  // Users: instructions with this one as an operand, each listed once.
  const std::vector<Instruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  // Makes every user (and the computation root, if this is it) use
  // `replacement` instead. Control edges are not moved.
  absl::Status ReplaceAllUsesWith(Instruction* replacement);

  // Control edges: predecessors must run before this instruction.
  const std::vector<Instruction*>& control_predecessors() const { return control_predecessors_; }
  const std::vector<Instruction*>& control_successors() const { return control_successors_; }
  // Whether a control edge leads into or out of this instruction (passes that move or merge
  // instructions leave these alone).
  bool HasControlEdges() const {
    return !control_predecessors_.empty() || !control_successors_.empty();
  }
  void AddControlDependencyTo(Instruction* successor);
  void RemoveControlDependencyTo(Instruction* successor);
  void DropAllControlDeps();

  // Computations this instruction calls, in XLA's order for the opcode:
  // while {condition, body}; conditional {branch 0, 1, ...} (true, false for
  // a pred selector); select-and-scatter {select, scatter}; fusion, call,
  // async-start {callee}; reduce, map, sort, scatter, reduce-window,
  // all-reduce, reduce-scatter {to_apply}; custom-call: any number.
  const std::vector<Computation*>& called_computations() const { return called_computations_; }
  std::vector<Computation*>& mutable_called_computations();
  // The first called computation, or nullptr when there is none.
  Computation* to_apply() const {
    return called_computations_.empty() ? nullptr : called_computations_[0];
  }

  const Literal& literal() const { return *attrs().literal; }
  bool IsRoot() const;
  bool IsConstant() const { return opcode_ == Opcode::kConstant; }
  bool HasSideEffect() const;

  // Same opcode, shape, attributes (raw ones ignored) and operands, compared
  // by identity, and the same called computations: what CSE considers equal.
  bool Identical(const Instruction& other) const;
  // Just the typed attributes and the constant's value of Identical (raw
  // attributes, shape, operands and called computations not compared), for
  // passes that compare those parts their own way (CSE modulo layouts,
  // structural computation equality).
  bool IdenticalAttributes(const Instruction& other) const;

  // A new unattached instruction with the same opcode, shape, attributes and
  // called computations, with `new_operands` as operands and `name`.
  std::unique_ptr<Instruction> CloneWithNewOperands(const std::vector<Instruction*>& new_operands,
                                                    std::string name) const;

 private:
  friend class Computation;
  friend class Module;  // Clone copies edge lists directly
  // A new unattached instruction sharing this one's shape and attributes,
  // with the same called computations and no edges.
  std::unique_ptr<Instruction> CloneWithoutEdges(std::string name) const;
  Instruction(const Instruction& prototype, std::string name);  // for CloneWithoutEdges
  void RemoveUser(Instruction* user);
  void AddUser(Instruction* user);
  // Stamps changed_at_ with the next tick of the module's clock (nothing outside a module).
  void NoteChange();

  Opcode opcode_;
  std::string name_;
  int64_t unique_id_ = -1;
  CopyOnWrite<Shape> shape_;
  CopyOnWrite<InstructionAttributes> attrs_;
  Computation* parent_ = nullptr;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  std::vector<Instruction*> control_predecessors_;
  std::vector<Instruction*> control_successors_;
  std::vector<Computation*> called_computations_;
  // Where the parent computation's list holds this instruction (O(1) removal).
  std::list<std::unique_ptr<Instruction>>::iterator position_;
  // Dense per-computation number, given when added (never reused there), so that graph walks
  // keep their visit state in a vector instead of a hash map.
  int64_t index_in_parent_ = -1;
  uint64_t changed_at_ = 0;
};

}  // namespace hlogym

#endif  // HLOGYM_HLO_INSTRUCTION_H_
