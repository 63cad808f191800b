#include "passes/sharding/spmd_partitioner.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "eval/equivalence.h"
#include "eval/evaluator.h"
#include "eval/partitions.h"
#include "eval/random_inputs.h"
#include "hlo/module.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"
#include "passes/control_flow/call_inliner.h"
#include "passes/sharding/sharding_text.h"
#include "passes/sharding/shardy_xla.h"
#include "passes/sharding/spmd_data_parallel.h"

namespace hlogym {
namespace {

constexpr std::string_view kGlobalToLocal = "xla.sdy.GlobalToLocalShape";
constexpr std::string_view kLocalToGlobal = "xla.sdy.LocalToGlobalShape";
constexpr std::string_view kSharding = "Sharding";
constexpr std::string_view kFullToShard = "SPMDFullToShardShape";
constexpr std::string_view kShardToFull = "SPMDShardToFullShape";

// The tile count of each of `rank` dimensions that a parameter's sharding
// gives (the first `rank` counts tile the data, the rest replicate); nullopt
// for what this pass does not partition.
std::optional<std::vector<int64_t>> TileCounts(std::string_view sharding, int64_t rank) {
  if (sharding == "{replicated}") return std::vector<int64_t>(rank, 1);
  std::optional<TiledSharding> tiled = ParseTiledSharding(sharding);
  if (!tiled) return std::nullopt;
  const int64_t count = static_cast<int64_t>(tiled->tiles.size());
  // Only the replicating (or manual) subgroup dimensions may follow the data's.
  if (count < rank || (count > rank && !tiled->subgroup_dims)) return std::nullopt;
  tiled->tiles.resize(rank);
  return tiled->tiles;
}

// `shape` as one partition of `sharding` holds it (each dimension divided by
// its tile count, rounded up, as XLA pads an uneven shard); nullopt for what
// this pass does not partition.
std::optional<Shape> TiledShape(const Shape& shape, std::string_view sharding) {
  if (!shape.IsArray()) return std::nullopt;
  std::optional<std::vector<int64_t>> tiles = TileCounts(sharding, shape.rank());
  if (!tiles) return std::nullopt;
  Shape tiled = shape;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    tiled.mutable_dimensions()[d] = (shape.dimensions(d) + (*tiles)[d] - 1) / (*tiles)[d];
  }
  return tiled;
}

std::string_view Target(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kCustomCall
             ? std::string_view(instruction.attrs().custom_call_target)
             : std::string_view();
}

// The per-partition shape a parameter with no sharding of its own takes from
// propagation: what the shard_map boundaries reading it read (Shardy's
// propagation gives it their in_shardings); nullopt where it has other users
// or they disagree.
std::optional<Shape> ShapeReadByBoundaries(const Instruction& parameter) {
  std::optional<Shape> read;
  for (const Instruction* user : parameter.users()) {
    const std::string_view target = Target(*user);
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) != &parameter) continue;
      std::optional<Shape> shape;
      if (target == kGlobalToLocal) {
        shape = user->shape().IsTuple() ? user->shape().tuple_shapes(i) : user->shape();
      } else if (target == kFullToShard) {
        shape = user->shape();
      } else if (target == kSharding) {  // GSPMD's form: the sharding it asks for
        shape = TiledShape(parameter.shape(), ShardingText(*user));
      }
      if (!shape || (read && !read->Compatible(*shape))) return std::nullopt;
      read = std::move(shape);
    }
  }
  return read;
}

// Whether the module holds a shard_map boundary anywhere (then its work is
// manual, and the data-parallel split is not what XLA would do).
bool HasShardMapBoundary(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      const std::string_view target = Target(*instruction);
      if (target == kGlobalToLocal || target == kLocalToGlobal || target == kFullToShard ||
          target == kShardToFull) {
        return true;
      }
    }
  }
  return false;
}

// Whether the entry's own sharding splits a result (jax.jit's out_shardings
// as GSPMD writes them on the root).
bool ResultShardingSplits(const Instruction& root) {
  std::vector<std::string_view> results = TupleShardingElements(ShardingText(root));
  if (results.empty()) results.push_back(ShardingText(root));
  for (std::string_view sharding : results) {
    std::optional<TiledSharding> tiled = ParseTiledSharding(sharding);
    if (!tiled) continue;
    const int64_t data_dims =
        static_cast<int64_t>(tiled->tiles.size()) - (tiled->subgroup_dims ? 1 : 0);
    for (int64_t d = 0; d < data_dims; ++d) {
      if (tiled->tiles[d] > 1) return true;
    }
  }
  return false;
}

// The per-partition shape of every entry instruction outside the manual part
// (instructions whose shape does not change are left out).
using LocalShapes = absl::flat_hash_map<const Instruction*, Shape>;

absl::StatusOr<LocalShapes> PlanLocalShapes(const Module& module) {
  const int64_t partitions = NumPartitions(module);
  if (partitions <= 1) {
    return absl::FailedPreconditionError("the module is compiled for one partition");
  }
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  // With no manual part, a result its sharding returns split is computed
  // split: the data-parallel split's work.
  if (!HasShardMapBoundary(module) && ResultShardingSplits(*entry->root_instruction())) {
    return absl::UnimplementedError("its result is returned split, with no manual part");
  }
  LocalShapes local;
  // By value: inserting into `local` moves its entries.
  auto local_of = [&](const Instruction* instruction) -> Shape {
    auto it = local.find(instruction);
    return it == local.end() ? instruction->shape() : it->second;
  };
  auto cannot = [](const Instruction& instruction, std::string_view why) {
    return absl::UnimplementedError(StrCat("hlogym partitions only shard_map's manual work, and ",
                                           OpcodeName(instruction.opcode()), " ",
                                           instruction.name(), " ", why));
  };
  for (const Instruction* instruction : entry->MakeInstructionPostOrder()) {
    const std::string_view target = Target(*instruction);
    const Shape& shape = instruction->shape();
    if (instruction->opcode() == Opcode::kParameter) {
      if (!shape.IsArray()) return cannot(*instruction, "is not an array");
      if (ShardingText(*instruction).empty() &&
          ShardingMayPropagateTo(module, "parameters", instruction->attrs().parameter_number)) {
        std::optional<Shape> read = ShapeReadByBoundaries(*instruction);
        if (!read) {
          return cannot(*instruction, "has no sharding and is read other than by shard_map");
        }
        local[instruction] = *std::move(read);
        continue;
      }
      std::optional<Shape> per_partition = TiledShape(shape, ShardingText(*instruction));
      if (!per_partition) {
        return cannot(*instruction, StrCat("has sharding '", ShardingText(*instruction),
                                           "' (replicated or tiled ones only)"));
      }
      local[instruction] = *std::move(per_partition);
    } else if (instruction->opcode() == Opcode::kCopy || target == kSharding ||
               target == kFuncResultSharding || target == kShardToFull ||
               // A reshape that changes nothing (JAX writes one per result).
               (instruction->opcode() == Opcode::kReshape &&
                shape.Compatible(instruction->operand(0)->shape()))) {
      if (instruction->operand_count() != 1) return cannot(*instruction, "has several operands");
      // Its own sharding, where it has one, must hold its operand's partition
      // as it is: a different one would need collectives.
      const Shape operand_local = local_of(instruction->operand(0));
      const std::string_view sharding = ShardingText(*instruction);
      if (!sharding.empty()) {
        std::optional<Shape> held =
            sharding == "{manual}" ? std::optional<Shape>(shape) : TiledShape(shape, sharding);
        if (!held || !held->Compatible(operand_local)) {
          return cannot(*instruction, StrCat("reshards its operand to '", sharding, "'"));
        }
      }
      local[instruction] = operand_local;
    } else if (target == kFullToShard || target == kGlobalToLocal) {
      // Its operands, partitioned, must be what the manual part reads: no
      // resharding (which would need collectives) between them.
      for (int64_t i = 0; i < instruction->operand_count(); ++i) {
        const Shape& want = shape.IsTuple() ? shape.tuple_shapes(i) : shape;
        if (!local_of(instruction->operand(i)).Compatible(want)) {
          return cannot(*instruction, StrCat("reads operand ", i, " as ", want.ToString(false),
                                             " but its partition is ",
                                             local_of(instruction->operand(i)).ToString(false)));
        }
      }
    } else if (target == kLocalToGlobal && !shape.IsTuple()) {
      if (instruction->operand_count() != 1) return cannot(*instruction, "has several operands");
      local[instruction] = local_of(instruction->operand(0));
    } else if (target == kLocalToGlobal || instruction->opcode() == Opcode::kTuple) {
      std::vector<Shape> elements;
      for (const Instruction* operand : instruction->operands())
        elements.push_back(local_of(operand));
      local[instruction] = Shape::Tuple(std::move(elements));
    } else if (instruction->opcode() == Opcode::kGetTupleElement) {
      const Shape tuple = local_of(instruction->operand(0));
      const int64_t index = instruction->attrs().tuple_index;
      if (!tuple.IsTuple() || index < 0 || index >= tuple.tuple_shapes_size()) {
        return cannot(*instruction, "reads no element of a tuple");
      }
      local[instruction] = tuple.tuple_shapes(index);
    } else if (const std::string_view sharding = ShardingText(*instruction);
               sharding.empty() || sharding == "{manual}" || sharding == "{replicated}") {
      // The manual part (GSPMD's inline, once the call-inliner has run; Shardy's
      // a call), or work every partition does whole: the same per partition,
      // and so must its operands be.
      for (const Instruction* operand : instruction->operands()) {
        if (!local_of(operand).Compatible(operand->shape())) {
          return cannot(*instruction,
                        StrCat("reads ", operand->name(), ", which is not per-partition"));
        }
      }
    } else {
      return cannot(*instruction, "is neither manual nor a shard_map boundary");
    }
  }
  // Inside the manual part, a sharding left to the partitioner (a shard_map
  // manual over some mesh axes only) or a nested shard_map needs propagation.
  for (const auto& computation : module.computations()) {
    if (computation.get() == entry) continue;
    for (const auto& instruction : computation->instructions()) {
      const std::string_view target = Target(*instruction);
      if ((target == kSharding && ShardingText(*instruction) != "{manual}") ||
          target == kGlobalToLocal || target == kLocalToGlobal || target == kFullToShard ||
          target == kShardToFull) {
        return cannot(*instruction, StrCat("in ", computation->name(),
                                           " leaves part of the work to the partitioner"));
      }
    }
  }
  return local;
}

// entry_computation_layout written from the entry's parameters and root.
std::string EntryLayoutText(const Computation& entry) {
  std::vector<Shape> parameters;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    parameters.push_back(entry.parameter_instruction(i)->shape());
  }
  return StrCat("{", Shape::Tuple(std::move(parameters)).ToString(), "->",
                entry.root_instruction()->shape().ToString(), "}");
}

// The header's entry_computation_layout, rewritten for the split entry.
void WriteEntryLayout(Module& module) {
  for (RawAttribute& attr : module.mutable_raw_attributes()) {
    if (attr.key == "entry_computation_layout") {
      attr.value = EntryLayoutText(*module.entry_computation());
    }
  }
}

// After the split: the header's layout follows the entry, and the parameters
// hold one partition's data, which is what a manual sharding says (so that a
// second run, as an agent may take it, finds nothing left to split).
void MarkPartitioned(Module& module) {
  WriteEntryLayout(module);
  const Computation& entry = *module.entry_computation();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    entry.parameter_instruction(i)->mutable_attrs().SetRaw("sharding", "{manual}");
  }
}

// Sets `instruction`'s dimensions to `local`'s, keeping its layout.
void SetLocalShape(Instruction& instruction, const Shape& local) {
  Shape shape = local;
  if (shape.IsArray() && instruction.shape().has_layout()) {
    shape.set_layout(*instruction.shape().layout());
  } else if (shape.IsTuple() && instruction.shape().IsTuple() &&
             instruction.shape().tuple_shapes_size() == shape.tuple_shapes_size()) {
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      const Shape& old_element = instruction.shape().tuple_shapes(i);
      if (old_element.IsArray() && old_element.has_layout()) {
        shape.mutable_tuple_shapes()[i].set_layout(*old_element.layout());
      }
    }
  }
  instruction.set_shape(std::move(shape));
}

Instruction* AddCopy(Computation& computation, Instruction* operand) {
  auto copy = std::make_unique<Instruction>(Opcode::kCopy, operand->shape());
  copy->AppendOperand(operand);
  return computation.AddInstruction(std::move(copy));
}

}  // namespace

namespace {

// The module as the partitioner sees it, after the call-inliner: a copy
// where it has calls, null where it has none (the module itself).
absl::StatusOr<std::unique_ptr<Module>> AsPartitionerSeesIt(const Module& module) {
  if (!ContainsOpcode(module, {Opcode::kCall})) return nullptr;
  std::unique_ptr<Module> inlined = module.Clone();
  HLOGYM_RETURN_IF_ERROR(CallInliner(/*single_call_site=*/false).Run(*inlined).status());
  return inlined;
}

}  // namespace

std::string SpmdPartitioningInferences(const Module& module) {
  if (PlanLocalShapes(module).ok() || HasShardMapBoundary(module) || NumPartitions(module) <= 1) {
    return "";
  }
  absl::StatusOr<std::unique_ptr<Module>> inlined = AsPartitionerSeesIt(module);
  if (!inlined.ok()) return "";
  return DataParallelInferences(*inlined ? **inlined : module);
}

absl::Status CheckSpmdPartitioning(const Module& module) {
  absl::Status manual = PlanLocalShapes(module).status();
  if (manual.ok() || HasShardMapBoundary(module) || NumPartitions(module) <= 1) return manual;
  HLOGYM_ASSIGN(inlined, AsPartitionerSeesIt(module));
  return CheckDataParallelPartitioning(inlined ? *inlined : module);
}

namespace {

// The dimension along which `part` is a slice of `whole` (the one whose size
// differs); nullopt where they have the same dimensions.
std::optional<int64_t> SlicedDimension(const Shape& whole, const Shape& part) {
  for (int64_t d = 0; d < whole.rank(); ++d) {
    if (whole.dimensions(d) != part.dimensions(d)) return d;
  }
  return std::nullopt;
}

// `literal`'s slice of `size` elements from `start` along `dim`, in `shape`.
Literal SliceOf(const Literal& literal, const Shape& shape, int64_t dim, int64_t start) {
  Literal out(shape);
  const Shape& whole = literal.shape();
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < whole.rank(); ++d) inner *= whole.dimensions(d);
  const int64_t size = shape.dimensions(dim);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const int64_t outer = i / (inner * size), along = (i / inner) % size, rest = i % inner;
    out.SetBits(i, literal.GetBits((outer * whole.dimensions(dim) + start + along) * inner + rest));
  }
  return out;
}

// Partition `p`'s part of `whole` as `part_shape` takes it, where the
// partitions split one dimension in order (shard_map's manual work).
Literal PartitionPart(const Literal& whole, const Shape& part_shape, int64_t p) {
  std::optional<int64_t> dim = SlicedDimension(whole.shape(), part_shape);
  if (!dim) return whole;
  return SliceOf(whole, part_shape, *dim, p * part_shape.dimensions(*dim));
}

int64_t ArrayLeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes()) count += ArrayLeafCount(element);
  return count;
}

// The tile of `whole` of `part_shape` whose index along each dimension
// `tile` gives; nullopt where that tile lies outside `whole` (a split that
// holds another part than hlogym's).
std::optional<Literal> TileOf(const Literal& whole, const Shape& part_shape,
                              const std::vector<int64_t>& tile) {
  if (whole.shape().Compatible(part_shape)) return whole;
  const Shape& shape = whole.shape();
  const int64_t rank = shape.rank();
  if (part_shape.rank() != rank || static_cast<int64_t>(tile.size()) != rank) return std::nullopt;
  for (int64_t d = 0; d < rank; ++d) {
    if ((tile[d] + 1) * part_shape.dimensions(d) > shape.dimensions(d)) return std::nullopt;
  }
  Literal out(part_shape);
  std::vector<int64_t> index(rank, 0);  // in the part
  for (int64_t i = 0; i < out.element_count(); ++i) {
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d) {
      from = from * shape.dimensions(d) + tile[d] * part_shape.dimensions(d) + index[d];
    }
    out.SetBits(i, whole.GetBits(from));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < part_shape.dimensions(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace

absl::Status CheckSplitAgainstWhole(const Module& original, const Module* given_split,
                                    uint64_t seed) {
  if (eval::NeedsEveryPartition(original)) {
    return absl::UnimplementedError("the original needs every partition to run (collectives)");
  }
  // A shard_map's manual program means something only per partition: run
  // whole on one device it has no meaning to compare with.
  for (const Instruction* instruction : original.entry_computation()->MakeInstructionPostOrder()) {
    const std::string_view target = instruction->attrs().custom_call_target;
    if (instruction->opcode() == Opcode::kCustomCall &&
        (target == kGlobalToLocal || target == kFullToShard)) {
      return absl::UnimplementedError(
          "a shard_map's manual program (it has no meaning run whole on one device)");
    }
  }
  std::unique_ptr<Module> made;
  if (given_split == nullptr) {
    made = SplitForPartitions(original);
    if (!made) return absl::UnimplementedError("nothing splits");
  }
  const Module* split = given_split != nullptr ? given_split : made.get();
  if (split->entry_computation()->num_parameters() !=
      original.entry_computation()->num_parameters()) {
    return absl::InvalidArgumentError("the split module takes other parameters");
  }
  const int64_t partitions = NumPartitions(original);
  // Which part each partition holds: shard_map's split slices one dimension
  // in partition order; the data-parallel one says (a mesh of several axes
  // splits each dimension along its own).
  std::optional<DataParallelTiles> tiles;
  if (!PlanLocalShapes(original).ok()) {
    HLOGYM_ASSIGN(inlined, AsPartitionerSeesIt(original));
    HLOGYM_ASSIGN(data_parallel, TilesOfDataParallelSplit(inlined ? *inlined : original));
    tiles = std::move(data_parallel);
  }
  auto part = [&](const Literal& whole, const Shape& part_shape, int64_t leaf,
                  int64_t p) -> absl::StatusOr<Literal> {
    if (!tiles) return PartitionPart(whole, part_shape, p);
    std::optional<Literal> tile = TileOf(whole, part_shape, tiles->tile_index.at(leaf).at(p));
    if (!tile) {
      return absl::FailedPreconditionError(
          StrCat("partition ", p, " holds another part of leaf ", leaf, " than the split planned"));
    }
    return *std::move(tile);
  };
  HLOGYM_ASSIGN(arguments, MakeRandomArguments(original, seed));
  if (tiles && tiles->tile_index.size() !=
                   arguments.size() +
                       ArrayLeafCount(split->entry_computation()->root_instruction()->shape())) {
    return absl::FailedPreconditionError("the split returns another number of outputs");
  }
  EvaluatorOptions options;
  options.num_threads = 1;
  HLOGYM_ASSIGN(whole, Evaluate(original, arguments, options));
  const Computation& entry = *split->entry_computation();
  std::vector<std::vector<Literal>> parts(partitions);
  for (int64_t p = 0; p < partitions; ++p) {
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (!arguments[i].shape().IsArray()) {
        return absl::UnimplementedError("a tuple-shaped parameter");
      }
      HLOGYM_ASSIGN(argument, part(arguments[i], entry.parameter_instruction(i)->shape(), i, p));
      parts[p].push_back(std::move(argument));
    }
  }
  HLOGYM_ASSIGN(results, eval::EvaluateEachPartition(*split, parts, options));
  const std::vector<LiteralLeaf> expected = whole.ArrayLeaves();
  // As CheckEquivalent compares: where the module computes in bf16 anywhere,
  // every float output carries its rounding, and a split rounds each
  // partition's partial sums before their all-reduce adds them.
  EquivalenceOptions tolerance;
  tolerance.computes_in_low_precision = ComputesInLowPrecision(original);
  for (int64_t p = 0; p < partitions; ++p) {
    const std::vector<LiteralLeaf> got = results[p].ArrayLeaves();
    if (got.size() != expected.size()) {
      return absl::FailedPreconditionError("the split returns another number of outputs");
    }
    for (size_t leaf = 0; leaf < got.size(); ++leaf) {
      HLOGYM_ASSIGN(want, part(*expected[leaf].array, got[leaf].array->shape(),
                               static_cast<int64_t>(arguments.size() + leaf), p));
      EquivalenceResult same = CompareLiterals(want, *got[leaf].array, tolerance);
      if (!same.equivalent) {
        return absl::FailedPreconditionError(
            StrCat("partition ", p, ", output leaf ", leaf, ": ", same.message));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> SpmdPartitioner::Run(Module& module) {
  if (!MayChange(module)) return false;
  absl::StatusOr<LocalShapes> local = PlanLocalShapes(module);
  if (!local.ok()) {
    // Not shard_map's: the data-parallel split, where it applies.
    if (HasShardMapBoundary(module)) return false;
    HLOGYM_ASSIGN(split, PartitionDataParallel(module));
    if (split) MarkPartitioned(module);
    return split;
  }
  Computation& entry = *module.entry_computation();
  bool changed = false;
  for (Instruction* instruction : entry.MakeInstructionPostOrder()) {
    auto it = local->find(instruction);
    if (it != local->end() && !instruction->shape().Compatible(it->second)) {
      SetLocalShape(*instruction, it->second);
      changed = true;
    }
    // Partitioned, a shard_map body may be inlined: XLA renames it so.
    if (instruction->opcode() == Opcode::kCall && instruction->to_apply() != nullptr &&
        IsShardyManualComputationBody(*instruction->to_apply())) {
      instruction->to_apply()->set_name(
          module.UniqueName("xla.sdy.inlinable_manual_computation_body"));
      changed = true;
    }
    const std::string_view target = Target(*instruction);
    if (target.empty() ||
        !(target == kGlobalToLocal || target == kLocalToGlobal || target == kFuncResultSharding ||
          target == kSharding || target == kFullToShard || target == kShardToFull)) {
      continue;
    }
    // A boundary becomes a copy of each per-partition operand (a tuple of
    // them for the tuple-shaped Shardy ones), which the cleanup and algsimp
    // remove.
    Instruction* replacement;
    if (instruction->shape().IsTuple()) {
      std::vector<Instruction*> copies;
      for (Instruction* operand : instruction->operands())
        copies.push_back(AddCopy(entry, operand));
      auto tuple = std::make_unique<Instruction>(Opcode::kTuple, instruction->shape());
      for (Instruction* copy : copies) tuple->AppendOperand(copy);
      replacement = entry.AddInstruction(std::move(tuple));
    } else {
      replacement = AddCopy(entry, instruction->operand(0));
    }
    HLOGYM_RETURN_IF_ERROR(entry.ReplaceInstruction(instruction, replacement));
    changed = true;
  }
  if (!changed) return false;
  MarkPartitioned(module);
  return true;
}

std::unique_ptr<Module> SplitForPartitions(const Module& original) {
  if (NumPartitions(original) <= 1 || original.entry_computation() == nullptr) return nullptr;
  // As the default pipeline splits it: after the call-inliner.
  std::unique_ptr<Module> partitioned = original.Clone();
  if (!CallInliner(/*single_call_site=*/false).Run(*partitioned).ok()) return nullptr;
  absl::StatusOr<bool> changed = SpmdPartitioner().Run(*partitioned);
  if (!changed.ok() || !*changed || SameEntrySignature(*partitioned, original)) {
    return nullptr;
  }
  return partitioned;
}

std::unique_ptr<Module> PartitionedToMatch(const Module& original, const Module& optimized) {
  if (optimized.entry_computation() == nullptr || SameEntrySignature(original, optimized)) {
    return nullptr;
  }
  std::unique_ptr<Module> partitioned = SplitForPartitions(original);
  if (partitioned == nullptr || !SameEntrySignature(*partitioned, optimized)) return nullptr;
  return partitioned;
}

bool SpmdPartitioner::MayChange(const Module& module) const { return NumPartitions(module) > 1; }

}  // namespace hlogym
