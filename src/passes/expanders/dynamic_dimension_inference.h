// dynamic_dimension_inference: XLA's DynamicDimensionInference, the part of
// DynamicPadder that works out, for every bounded-dynamic dimension
// (`f32[<=8]`), the s32[] instruction that holds its size at run time.
//
// Sizes start at set-dimension-size and flow through the instructions that
// read them, each opcode by XLA's rule: elementwise ops keep their operands'
// sizes (two different sizes of one dimension meet in XLA's eleven-instruction
// max/min select), broadcast and transpose move them, reduce and dot drop the
// reduced and contracted dimensions, slice and pad compute new sizes, gather
// takes its indices' batch sizes, concatenate adds them up, reduce-window
// counts its windows. Conditionals pass sizes into and out of their branches,
// and while loops carry them in their state, as extra tuple elements, as
// XLA's inference widens them. Recording a size clears the dimension's
// dynamic bit, so that the module ends static; get-dimension-size is replaced
// by the size it reads. What this does not model (entry parameters with
// dynamic dimensions, which XLA pads with PadToStatic; reshapes that split a
// dynamic dimension into a minor one or merge one that is not the major;
// constants, convolutions, custom calls)
// is an Unimplemented error naming the instruction, and the module is then in
// an unspecified state: run it on a clone first (DynamicPadder does).
#ifndef HLOGYM_PASSES_EXPANDERS_DYNAMIC_DIMENSION_INFERENCE_H_
#define HLOGYM_PASSES_EXPANDERS_DYNAMIC_DIMENSION_INFERENCE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/instruction.h"
#include "hlo/module.h"

namespace hlogym {

class DynamicDimensionInference {
 public:
  // A dynamic dimension of an instruction's result: the tuple index of the
  // array it belongs to ({} for an array result) and the dimension.
  struct Dimension {
    std::vector<int64_t> index;
    int64_t dim = 0;
  };

  // Infers every dynamic dimension of the module's computations (callees
  // first), adding the size arithmetic it needs.
  static absl::StatusOr<DynamicDimensionInference> Run(Module& module);

  // The size instruction of `hlo`'s dimension `dim` at tuple `index`, or
  // nullptr when that dimension has none (it is static).
  Instruction* GetSize(const Instruction* hlo, const std::vector<int64_t>& index,
                       int64_t dim) const;
  Instruction* GetSize(const Instruction* hlo, int64_t dim) const { return GetSize(hlo, {}, dim); }
  // `hlo`'s dynamic dimensions with their sizes, in XLA's order (tuple index
  // as text, then dimension).
  std::vector<std::pair<Dimension, Instruction*>> SizesOf(const Instruction* hlo) const;
  bool HasSizes(const Instruction* hlo) const { return sizes_.contains(hlo); }
  // Gives `to`, which replaces `from`, `from`'s sizes (the padder's rewrites
  // replace what they pad; the masks after them read the sizes).
  void ForwardSizes(const Instruction* from, Instruction* to);

 private:
  using Key = std::pair<std::string, int64_t>;  // (index as "{1,0}", dim): XLA's key order
  struct Entry {
    Dimension dimension;
    Instruction* size = nullptr;
  };

  absl::Status InferComputation(Computation* computation);
  absl::Status Infer(Instruction* hlo);
  absl::Status InferConditional(Instruction* conditional);
  absl::Status InferWhile(Instruction* loop);
  // Records `size` for (`index`, `dim`) of `hlo`; clears the dimension's
  // dynamic bit unless `keep_dynamic_bit` (set-dimension-size keeps its own,
  // since it is removed at the end).
  void SetSize(Instruction* hlo, const std::vector<int64_t>& index, int64_t dim, Instruction* size,
               bool keep_dynamic_bit = false);
  // Elementwise ops: per result dimension the operands' sizes, combined.
  absl::Status InferNary(Instruction* hlo);
  absl::Status InferReshape(Instruction* hlo);
  absl::Status InferGather(Instruction* hlo);
  absl::Status InferScatter(Instruction* hlo);
  absl::Status InferSlice(Instruction* hlo);
  absl::Status InferReduceWindow(Instruction* hlo);
  absl::Status InferPad(Instruction* hlo);
  absl::Status InferGetDimensionSize(Instruction* hlo);

  Module* module_ = nullptr;
  absl::flat_hash_map<const Instruction*, std::map<Key, Entry>> sizes_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_DYNAMIC_DIMENSION_INFERENCE_H_
