// spmd-partitioning's second half (spmd_partitioner.h): the programs whose
// shardings GSPMD or Shardy propagate themselves, for the data-parallel case:
// every value whole on every partition or split evenly along one dimension
// over all of them, a reduction over the split dimension completed by an
// all-reduce, gathers and scatters batched with split indices (integer-label
// losses), a broadcast wanted both ways copied, an iota split along its own
// dimension offset per partition, while loops whose state is placed element
// by element (planned again until the body writes back what it reads); and
// the resharding XLA does around what cannot stay split (batch norms, a
// reshape merging the split batch into attention's heads, split outputs
// returned whole, weights and biases split along the batch's mesh axis as
// FSDP splits them): operands gathered (all-gather), results sliced again at
// the partition's offset (dynamic-slice). On a mesh of several axes the same
// planning runs along each axis in turn (MeshAxis). Anything else is left to
// CheckSpmdPartitioning's reason. What lives where is planned in
// spmd_data_parallel_plan.h; this file finds the mesh's axes and rewrites the
// module by each axis's plan.
#include "passes/sharding/spmd_data_parallel.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "hlo/module.h"
#include "hlo/opcode.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"
#include "passes/builders.h"
#include "passes/collectives/collective_rewrite_utils.h"
#include "passes/pass_utils.h"
#include "passes/sharding/sharding_text.h"
#include "passes/sharding/spmd_data_parallel_plan.h"

namespace hlogym {
namespace {

using data_parallel::DataParallelPlan;
using data_parallel::HoldsSplit;
using data_parallel::IsShardingMark;
using data_parallel::LoopElement;
using data_parallel::MeshAxis;
using data_parallel::Placement;
using data_parallel::PlacementFromSharding;
using data_parallel::PlanDataParallel;
using data_parallel::PlanningOrder;
using data_parallel::TupleUseOf;

// Entry `index` (a scalar) of `table`, a constant of `type`: dynamic-slice
// and reshape, as XLA's partitioner reads a partition's offset or ordinal.
// Where `index` is null, partition-id, made after the table.
absl::StatusOr<Instruction*> TableEntry(Computation* computation, PrimitiveType type,
                                        const std::vector<int64_t>& table, Instruction* index) {
  Literal literal(Shape(type, {static_cast<int64_t>(table.size())}));
  for (size_t i = 0; i < table.size(); ++i) literal.SetFromInt64(i, table[i]);
  Instruction* entries = MakeConstant(computation, std::move(literal));
  if (index == nullptr) {
    index = AddWithLayoutOf(
        computation,
        std::make_unique<Instruction>(Opcode::kPartitionId, Shape::Scalar(PrimitiveType::kU32)),
        entries);
  }
  auto pick = std::make_unique<Instruction>(Opcode::kDynamicSlice, Shape(type, {1}));
  pick->AppendOperand(entries);
  pick->AppendOperand(index);
  pick->mutable_attrs().dynamic_slice_sizes = {1};
  return MakeReshape(AddWithLayoutOf(computation, std::move(pick), entries),
                     std::vector<int64_t>{});
}

// The offset of the partition's part of `part` elements along `axis` (its
// coordinate times `part`), a scalar s32 picked by partition-id: over the
// whole mesh straight from a table of one offset per partition; along one
// axis of several from a table of one per coordinate, at the partition's
// coordinate, itself read from a table (u32), as XLA's partitioner reads a
// slice's offset. `partition_id` is made where it is null.
absl::StatusOr<Instruction*> PartOffset(Computation* computation, const MeshAxis& axis,
                                        int64_t part, Instruction* partition_id) {
  std::vector<int64_t> by_coordinate(axis.size);
  for (int64_t i = 0; i < axis.size; ++i) by_coordinate[i] = i * part;
  if (axis.whole_mesh()) {
    return TableEntry(computation, PrimitiveType::kS32, by_coordinate, partition_id);
  }
  HLOGYM_ASSIGN(coordinate,
                TableEntry(computation, PrimitiveType::kU32, axis.Offsets(1), partition_id));
  return TableEntry(computation, PrimitiveType::kS32, by_coordinate, coordinate);
}

// An iota made split along its own dimension counts from the partition's
// first index there: its users read it plus that offset, the partition's
// ordinal (from a table, by partition-id) times the iota's own size, as
// XLA's partitioner makes it.
absl::Status AddIotaOffset(Instruction* iota, const MeshAxis& axis) {
  Computation* computation = iota->parent();
  const std::vector<Instruction*> users = iota->users();
  const bool was_root = iota->IsRoot();
  // One table of every partition's ordinal along the axis, on a mesh of
  // several axes too (XLA's partitioner reads an iota's offset so).
  HLOGYM_ASSIGN(ordinal, TableEntry(computation, PrimitiveType::kS32, axis.Offsets(1),
                                    /*index=*/nullptr));
  const int64_t dim = iota->attrs().iota_dimension;
  Instruction* size = MakeScalarConstant(computation, PrimitiveType::kS32,
                                         static_cast<double>(iota->shape().dimensions(dim)));
  HLOGYM_ASSIGN(offset, MakeBinary(Opcode::kMultiply, ordinal, size));
  const PrimitiveType type = iota->shape().element_type();
  if (type != PrimitiveType::kS32) {
    HLOGYM_ASSIGN(converted, MakeConvert(offset, type));
    offset = converted;
  }
  HLOGYM_ASSIGN(offsets, MakeBroadcast(offset, iota->shape().dimensions(), {}));
  HLOGYM_ASSIGN(counted, MakeBinary(Opcode::kAdd, iota, offsets));
  for (Instruction* user : users) user->ReplaceUsesOfOperand(iota, counted);
  if (was_root) computation->set_root_instruction(counted);
  return absl::OkStatus();
}

// The dynamic-slices ReslicePerPartition made, by the axis and dimension
// each slices along.
struct EarlierSlice {
  MeshAxis axis;
  int64_t dim;
  const Instruction* value;            // what it slices
  bool per_partition_offsets = false;  // read from tables of every partition's
};
using EarlierSlices = absl::flat_hash_map<const Instruction*, EarlierSlice>;

// Splits each of plan.resliced's whole values in `computation` (the entry,
// or a loop's body: a scanned layer's weight gradient, summed and sliced in
// the body) for its users: a dynamic-slice at the partition's offset along
// the split dimension, which partition-id picks from a table of every
// partition's offset. One partition-id, one zero index and one offset per
// table serve every slice of the computation, as XLA's partitioner shares
// them.
//
// A value an earlier axis sliced (`earlier_slices`) that this axis slices
// too, whole along both, is sliced once along both: the earlier slice takes
// this axis's dimension as well, each offset from a table of every
// partition's, as XLA's partitioner slices a replicated value into tiles of
// both axes. The slices made are recorded there for the axes after it.
absl::Status ResliceIn(Computation& computation, const DataParallelPlan& plan,
                       EarlierSlices& earlier_slices) {
  const int64_t n = plan.partitions;
  Instruction* zero = MakeScalarConstant(&computation, PrimitiveType::kS32, 0);
  Instruction* partition_id = AddWithLayoutOf(
      &computation,
      std::make_unique<Instruction>(Opcode::kPartitionId, Shape::Scalar(PrimitiveType::kU32)),
      zero);
  absl::flat_hash_map<int64_t, Instruction*> offset_by_slice_size;
  for (Instruction* planned : computation.MakeInstructionPostOrder()) {
    auto resliced = plan.resliced.find(planned);
    if (resliced == plan.resliced.end()) continue;
    const int64_t dim = resliced->second;
    // A partial result (a weight gradient) is whole once its all-reduce has
    // completed it: the slice reads that, as XLA slices after the all-reduce.
    Instruction* instruction = planned;
    auto placement = plan.placements.find(planned);
    if (placement != plan.placements.end() &&
        (placement->second.kind == Placement::Kind::kPartial ||
         plan.masked_gathers.contains(planned)) &&
        planned->users().size() == 1 && planned->users().front()->opcode() == Opcode::kAllReduce) {
      instruction = planned->users().front();
    }
    const int64_t size = instruction->shape().dimensions(dim) / n;
    Instruction*& offset = offset_by_slice_size[size];
    if (offset == nullptr) {
      HLOGYM_ASSIGN(scalar, PartOffset(&computation, plan.axis, size, partition_id));
      offset = scalar;
    }
    auto whole = plan.whole_readers.find(planned);
    auto reads_whole = [&](const Instruction* user) {
      return whole != plan.whole_readers.end() &&
             std::find(whole->second.begin(), whole->second.end(), user) != whole->second.end();
    };
    std::vector<Instruction*> users;
    for (Instruction* user : instruction->users()) {
      auto earlier = earlier_slices.find(user);
      if (earlier == earlier_slices.end() || earlier->second.dim == dim || reads_whole(user)) {
        users.push_back(user);
        continue;
      }
      // The split along this axis already divided its shape.
      const EarlierSlice& along = earlier->second;
      HLOGYM_ASSIGN(
          earlier_offset,
          TableEntry(&computation, PrimitiveType::kS32,
                     along.axis.Offsets(user->shape().dimensions(along.dim)), partition_id));
      HLOGYM_ASSIGN(this_offset, TableEntry(&computation, PrimitiveType::kS32,
                                            plan.axis.Offsets(size), partition_id));
      user->ReplaceOperandWith(1 + along.dim, earlier_offset);
      user->ReplaceOperandWith(1 + dim, this_offset);
      earlier->second.per_partition_offsets = true;
    }
    if (users.empty()) continue;
    Shape slice_shape = instruction->shape();
    slice_shape.mutable_dimensions()[dim] = size;
    const bool was_root = instruction->IsRoot();
    auto slice = std::make_unique<Instruction>(Opcode::kDynamicSlice, slice_shape);
    slice->AppendOperand(instruction);
    for (int64_t d = 0; d < slice_shape.rank(); ++d) slice->AppendOperand(d == dim ? offset : zero);
    slice->mutable_attrs().dynamic_slice_sizes = slice_shape.dimensions();
    Instruction* added = computation.AddInstruction(std::move(slice));
    earlier_slices[added] = {plan.axis, dim, instruction};
    for (Instruction* user : users) {
      if (!reads_whole(user)) user->ReplaceUsesOfOperand(instruction, added);
    }
    if (was_root) computation.set_root_instruction(added);
  }
  return absl::OkStatus();
}

// ResliceIn the entry, then in each loop's body that slices a value.
absl::Status ReslicePerPartition(Module& module, const DataParallelPlan& plan,
                                 EarlierSlices& earlier_slices) {
  if (plan.resliced.empty()) return absl::OkStatus();
  HLOGYM_RETURN_IF_ERROR(ResliceIn(*module.entry_computation(), plan, earlier_slices));
  for (const Instruction* loop : plan.order) {
    if (loop->opcode() != Opcode::kWhile) continue;
    Computation& body = *loop->called_computations()[1];
    const bool slices =
        std::any_of(plan.resliced.begin(), plan.resliced.end(),
                    [&](const auto& resliced) { return resliced.first->parent() == &body; });
    if (slices) HLOGYM_RETURN_IF_ERROR(ResliceIn(body, plan, earlier_slices));
  }
  return absl::OkStatus();
}

// `value` (the partition's part, split along `from`) split along `to`
// instead, as XLA's partitioner reshards between two dimensions over the same
// devices: `to` split into [partitions, part] (a reshape), the parts exchanged
// (an all-to-all along the new dimension), the received parts moved before
// `from` (a transpose) and merged into it (a reshape).
absl::StatusOr<Instruction*> ReshardWithAllToAll(Instruction* value, int64_t from, int64_t to,
                                                 int64_t partitions, const std::string& groups,
                                                 int64_t channel_id) {
  const std::vector<int64_t> local = value->shape().dimensions();
  std::vector<int64_t> parts;
  for (int64_t d = 0; d < static_cast<int64_t>(local.size()); ++d) {
    if (d == to) parts.push_back(partitions);
    parts.push_back(d == to ? local[d] / partitions : local[d]);
  }
  HLOGYM_ASSIGN(grouped, MakeReshape(value, parts));
  Shape exchanged_shape = grouped->shape();
  auto all_to_all = std::make_unique<Instruction>(Opcode::kAllToAll, exchanged_shape);
  all_to_all->AppendOperand(grouped);
  InstructionAttributes& attrs = all_to_all->mutable_attrs();
  attrs.dimensions = {to};
  attrs.has_dimensions = true;  // printed: the array form, split along `to`
  attrs.SetRaw("channel_id", std::to_string(channel_id));
  attrs.SetRaw("replica_groups", groups);
  Instruction* exchanged = value->parent()->AddInstruction(std::move(all_to_all));
  // The received parts' dimension goes right before `from` (shifted by one
  // where it lies after `to`).
  const int64_t from_in_parts = from < to ? from : from + 1;
  std::vector<int64_t> permutation;
  for (int64_t d = 0; d < static_cast<int64_t>(parts.size()); ++d) {
    if (d == from_in_parts) permutation.push_back(to);
    if (d != to) permutation.push_back(d);
  }
  HLOGYM_ASSIGN(moved, MakeTranspose(exchanged, permutation));
  std::vector<int64_t> result = local;
  result[from] *= partitions;
  result[to] /= partitions;
  return MakeReshape(moved, result);
}

// Splits the module along the plan's axis. Sharding constraints stay for
// the axes after it (`last_axis` false), which read them again;
// `earlier_slices` carries the slices of whole values from axis to axis.
// A gather of one index along its operand's split dimension `dim`
// (GathersOneIndexAlong) made per partition as XLA's partitioner makes it:
// the index clamped into the operand, the partition's offset along `axis`
// taken off it, and what falls outside the partition's part zero. Returns
// that select, the partial result an all-reduce sums.
absl::StatusOr<Instruction*> MaskGatherOutsidePart(Module& module, Instruction* gather, int64_t dim,
                                                   const MeshAxis& axis) {
  Computation* computation = gather->parent();
  const GatherDimensionNumbers& numbers = *gather->attrs().gather_dimension_numbers;
  const int64_t vector_dim = numbers.index_vector_dim;
  Instruction* indices = gather->operand(1);
  const std::vector<int64_t> index_dims = indices->shape().dimensions();
  const int64_t part = gather->operand(0)->shape().dimensions(dim);  // split already
  // Along the index vector, one index: [1]-shaped values broadcast along it.
  auto along_vector = [&](Instruction* scalar) -> absl::StatusOr<Instruction*> {
    HLOGYM_ASSIGN(one, MakeReshape(scalar, std::vector<int64_t>{1}));
    return MakeBroadcast(one, index_dims, std::vector<int64_t>{vector_dim});
  };
  Literal last_index(Shape(PrimitiveType::kS32, {1}));
  last_index.SetFromInt64(0, part * axis.size - 1);
  HLOGYM_ASSIGN(last, MakeBroadcast(MakeConstant(computation, std::move(last_index)), index_dims,
                                    std::vector<int64_t>{vector_dim}));
  HLOGYM_ASSIGN(lowest, MakeBroadcast(MakeScalarConstant(computation, PrimitiveType::kS32, 0),
                                      index_dims, std::vector<int64_t>{}));
  auto clamp = std::make_unique<Instruction>(Opcode::kClamp, indices->shape());
  for (Instruction* operand : {lowest, indices, last}) clamp->AppendOperand(operand);
  Instruction* clamped = computation->AddInstruction(std::move(clamp));
  HLOGYM_ASSIGN(offset, PartOffset(computation, axis, part, /*partition_id=*/nullptr));
  HLOGYM_ASSIGN(first, along_vector(offset));
  HLOGYM_ASSIGN(below, MakeCompare(ComparisonDirection::kLt, clamped, first));
  HLOGYM_ASSIGN(end, MakeBinary(Opcode::kAdd, offset,
                                MakeScalarConstant(computation, PrimitiveType::kS32, part - 1)));
  HLOGYM_ASSIGN(final_index, along_vector(end));
  HLOGYM_ASSIGN(above, MakeCompare(ComparisonDirection::kGt, clamped, final_index));
  HLOGYM_ASSIGN(outside_vector, MakeBinary(Opcode::kOr, below, above));
  Computation* any = AddScalarBinaryComputation(module, "add", Opcode::kOr, PrimitiveType::kPred,
                                                /*with_layout=*/true, "x", "y");
  HLOGYM_ASSIGN(outside_index,
                MakeReduce(outside_vector, MakeScalarConstant(computation, PrimitiveType::kPred, 0),
                           std::vector<int64_t>{vector_dim}, any));
  // The output's dimensions that are not the slice's: the indices' batch.
  std::vector<int64_t> batch;
  for (int64_t d = 0; d < gather->shape().rank(); ++d) {
    if (std::find(numbers.offset_dims.begin(), numbers.offset_dims.end(), d) ==
        numbers.offset_dims.end()) {
      batch.push_back(d);
    }
  }
  HLOGYM_ASSIGN(outside, MakeBroadcast(outside_index, gather->shape().dimensions(), batch));
  HLOGYM_ASSIGN(zeros,
                MakeBroadcast(MakeScalarConstant(computation, gather->shape().element_type(), 0),
                              gather->shape().dimensions(), std::vector<int64_t>{}));
  HLOGYM_ASSIGN(local, MakeBinary(Opcode::kSubtract, clamped, first));
  gather->ReplaceOperandWith(1, local);
  return MakeSelect(outside, zeros, gather);
}

// A scatter of one index along its operand's split dimension `dim`
// (ScattersOneIndexAlong) into the partition's part: its indices less the
// partition's offset along `axis`, as XLA's partitioner makes it.
absl::Status OffsetScatterIndices(Instruction* scatter, int64_t dim, const MeshAxis& axis) {
  Computation* computation = scatter->parent();
  const int64_t vector_dim = scatter->attrs().scatter_dimension_numbers->index_vector_dim;
  Instruction* indices = scatter->operand(1);
  const int64_t part = scatter->operand(0)->shape().dimensions(dim);  // split already
  HLOGYM_ASSIGN(offset, PartOffset(computation, axis, part, /*partition_id=*/nullptr));
  HLOGYM_ASSIGN(one, MakeReshape(offset, std::vector<int64_t>{1}));
  HLOGYM_ASSIGN(
      first, MakeBroadcast(one, indices->shape().dimensions(), std::vector<int64_t>{vector_dim}));
  HLOGYM_ASSIGN(local, MakeBinary(Opcode::kSubtract, indices, first));
  scatter->ReplaceOperandWith(1, local);
  return absl::OkStatus();
}

absl::StatusOr<bool> ApplyDataParallel(Module& module, const DataParallelPlan& plan, bool last_axis,
                                       EarlierSlices& earlier_slices) {
  Computation& entry = *module.entry_computation();
  const int64_t n = plan.partitions;
  const std::string groups = plan.axis.Groups();
  int64_t channel_id = NextChannelId(module);
  bool changed = false;
  // The whole shapes of the values gathered again, before they are split.
  absl::flat_hash_map<const Instruction*, Shape> whole_shapes;
  for (const auto& [value, gather] : plan.gathers) whole_shapes[value] = value->shape();
  // Iotas made split along their own dimension (AddIotaOffset).
  std::vector<Instruction*> offset_iotas;
  // A partial result completed right where it is made, as XLA's partitioner
  // does, with a reducer of its own: a copy of the reduction's, or an add (a
  // dot's, a masked gather's).
  auto complete_with_all_reduce = [&](Instruction* instruction) {
    Computation* reducer = instruction->opcode() == Opcode::kReduce
                               ? CloneComputation(module, *instruction->to_apply())
                               : AddScalarBinaryComputation(module, "add.clone", Opcode::kAdd,
                                                            instruction->shape().element_type(),
                                                            /*with_layout=*/true, "x", "y");
    const std::vector<Instruction*> users = instruction->users();
    const bool was_root = instruction->IsRoot();
    auto all_reduce = std::make_unique<Instruction>(Opcode::kAllReduce, instruction->shape());
    all_reduce->AppendOperand(instruction);
    all_reduce->mutable_called_computations() = {reducer};
    InstructionAttributes& attrs = all_reduce->mutable_attrs();
    attrs.SetRaw("channel_id", std::to_string(channel_id++));
    attrs.SetRaw("replica_groups", groups);
    attrs.SetRaw("use_global_device_ids", "true");
    Computation& computation = *instruction->parent();  // a loop's body, or the entry
    Instruction* added = computation.AddInstruction(std::move(all_reduce));
    for (Instruction* user : users) user->ReplaceUsesOfOperand(instruction, added);
    if (was_root) computation.set_root_instruction(added);
    changed = true;
  };
  for (Instruction* instruction : plan.order) {
    auto it = plan.placements.find(instruction);
    if (it == plan.placements.end()) continue;
    const Placement& placement = it->second;
    if (placement.split() && plan.resliced.contains(instruction)) {
      // made whole; its slice follows below (a masked gather's after its sum)
      if (plan.masked_gathers.contains(instruction)) complete_with_all_reduce(instruction);
    } else if (placement.split()) {
      Shape shape = instruction->shape();
      shape.mutable_dimensions()[placement.dim] /= n;
      instruction->set_shape(std::move(shape));
      if (instruction->opcode() == Opcode::kSlice) {
        // It takes all of the split dimension, now the partition's part.
        instruction->mutable_attrs().slice[placement.dim] = {
            0, instruction->shape().dimensions(placement.dim), 1};
      }
      if (instruction->opcode() == Opcode::kDynamicSlice) {
        instruction->mutable_attrs().dynamic_slice_sizes[placement.dim] =
            instruction->shape().dimensions(placement.dim);
      }
      if (instruction->opcode() == Opcode::kIota &&
          instruction->attrs().iota_dimension == placement.dim) {
        offset_iotas.push_back(instruction);
      }
      if (instruction->opcode() == Opcode::kGather) {
        // A gather of whole slices along the operand's split dimension takes
        // the partition's part of them.
        auto from = plan.placements.find(instruction->operand(0));
        const std::vector<int64_t>& batching =
            instruction->attrs().gather_dimension_numbers->operand_batching_dims;
        auto gathered = plan.gathers.find(instruction->operand(0));
        const bool reads_whole =
            gathered != plan.gathers.end() &&
            std::find(gathered->second.users.begin(), gathered->second.users.end(), instruction) !=
                gathered->second.users.end();
        if (from != plan.placements.end() && from->second.split() && !reads_whole &&
            std::find(batching.begin(), batching.end(), from->second.dim) == batching.end()) {
          instruction->mutable_attrs().gather_slice_sizes[from->second.dim] /= n;
        }
      }
      changed = true;
    } else if (placement.kind == Placement::Kind::kPartial) {
      complete_with_all_reduce(instruction);
    }
  }
  // In the entry or a loop's body (a scan's step of weights split as FSDP
  // splits them, gathered every iteration).
  for (Instruction* instruction : plan.order) {
    auto gather = plan.gathers.find(instruction);
    if (gather == plan.gathers.end()) continue;
    auto all_gather =
        std::make_unique<Instruction>(Opcode::kAllGather, whole_shapes.at(instruction));
    all_gather->AppendOperand(instruction);
    InstructionAttributes& attrs = all_gather->mutable_attrs();
    attrs.dimensions = {gather->second.dim};
    attrs.SetRaw("channel_id", std::to_string(channel_id++));
    attrs.SetRaw("replica_groups", groups);
    attrs.SetRaw("use_global_device_ids", "true");
    Instruction* added = instruction->parent()->AddInstruction(std::move(all_gather));
    const std::vector<const Instruction*>& readers = gather->second.users;
    for (Instruction* user : std::vector<Instruction*>(instruction->users())) {
      if (std::find(readers.begin(), readers.end(), user) != readers.end()) {
        user->ReplaceUsesOfOperand(instruction, added);
      }
    }
    if (gather->second.for_result) entry.set_root_instruction(added);
    changed = true;
  }
  for (Instruction* instruction : plan.order) {
    auto reshard = plan.reshards.find(instruction);
    if (reshard == plan.reshards.end()) continue;
    HLOGYM_ASSIGN(moved, ReshardWithAllToAll(instruction, reshard->second.from, reshard->second.to,
                                             n, groups, channel_id++));
    const std::vector<const Instruction*>& readers = reshard->second.users;
    for (Instruction* user : std::vector<Instruction*>(instruction->users())) {
      if (std::find(readers.begin(), readers.end(), user) != readers.end()) {
        user->ReplaceUsesOfOperand(instruction, moved);
      }
    }
    changed = true;
  }
  for (Instruction* scatter : plan.order) {
    auto split = plan.offset_scatters.find(scatter);
    if (split == plan.offset_scatters.end()) continue;
    HLOGYM_RETURN_IF_ERROR(OffsetScatterIndices(scatter, split->second, plan.axis));
    changed = true;
  }
  HLOGYM_RETURN_IF_ERROR(ReslicePerPartition(module, plan, earlier_slices));
  // Masked gathers, their indices gathered above where they were split (and
  // each sliced back along the batch after its sum where it was): the
  // all-reduce that completes each sums the select.
  for (Instruction* gather : plan.order) {
    if (!plan.masked_gathers.contains(gather)) continue;
    if (gather->users().size() != 1 || gather->users().front()->opcode() != Opcode::kAllReduce) {
      return absl::InternalError(StrCat("masked gather ", gather->name(), " is not summed"));
    }
    Instruction* all_reduce = gather->users().front();
    HLOGYM_ASSIGN(masked,
                  MaskGatherOutsidePart(module, gather, plan.placements.at(gather->operand(0)).dim,
                                        plan.axis));
    all_reduce->ReplaceOperandWith(0, masked);
  }
  for (Instruction* broadcast : plan.order) {
    auto copies = plan.other_split_copies.find(broadcast);
    if (copies == plan.other_split_copies.end()) continue;
    for (const DataParallelPlan::SplitCopy& copy : copies->second) {
      Shape shape = broadcast->shape();
      shape.mutable_dimensions()[copy.dim] /= n;
      std::unique_ptr<Instruction> split = broadcast->CloneWithNewOperands(
          broadcast->operands(), module.UniqueName(broadcast->name()));
      split->set_shape(std::move(shape));
      Instruction* added = broadcast->parent()->AddInstruction(std::move(split));
      for (Instruction* user : std::vector<Instruction*>(broadcast->users())) {
        if (std::find(copy.users.begin(), copy.users.end(), user) != copy.users.end()) {
          user->ReplaceUsesOfOperand(broadcast, added);
        }
      }
      changed = true;
    }
  }
  for (Instruction* instruction : plan.order) {
    auto copy = plan.split_copies.find(instruction);
    if (copy == plan.split_copies.end()) continue;
    Shape shape = instruction->shape();
    shape.mutable_dimensions()[copy->second.dim] /= n;
    std::unique_ptr<Instruction> split = instruction->CloneWithNewOperands(
        instruction->operands(), module.UniqueName(instruction->name()));
    split->set_shape(std::move(shape));
    Instruction* added = instruction->parent()->AddInstruction(std::move(split));
    if (added->opcode() == Opcode::kIota && added->attrs().iota_dimension == copy->second.dim) {
      offset_iotas.push_back(added);
    }
    const std::vector<const Instruction*>& split_users = copy->second.users;
    for (Instruction* user : std::vector<Instruction*>(instruction->users())) {
      if (std::find(split_users.begin(), split_users.end(), user) == split_users.end()) continue;
      if (!TupleUseOf(*user, *instruction, copy->second.dim, plan)) {
        user->ReplaceUsesOfOperand(instruction, added);
        continue;
      }
      // A tuple holds the copy only where it passes the value on split.
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == instruction && HoldsSplit(*user, i, copy->second.dim, plan)) {
          user->ReplaceOperandWith(i, added);
        }
      }
    }
    changed = true;
  }
  for (Instruction* iota : offset_iotas) HLOGYM_RETURN_IF_ERROR(AddIotaOffset(iota, plan.axis));
  // Sharding constraints, all met, become copies of their operands, as XLA's
  // partitioner leaves them.
  for (Instruction* instruction : plan.order) {
    if (!last_axis || !IsShardingMark(*instruction)) continue;
    auto copy = std::make_unique<Instruction>(Opcode::kCopy, instruction->operand(0)->shape());
    copy->AppendOperand(instruction->operand(0));
    Computation& computation = *instruction->parent();
    HLOGYM_RETURN_IF_ERROR(
        computation.ReplaceInstruction(instruction, computation.AddInstruction(std::move(copy))));
    changed = true;
  }
  // Tuples follow their elements (a tuple's elements come first), and a
  // loop's state its placements: the loop's result and its condition's and
  // body's parameter. (The order is made again: the constraints above are
  // gone.)
  absl::flat_hash_map<const Computation*, const Instruction*> loop_of;
  HLOGYM_ASSIGN(order, PlanningOrder(entry, loop_of));
  for (Instruction* instruction : order) {
    if (auto loop = plan.loops.find(instruction); loop != plan.loops.end()) {
      Shape state = instruction->shape();
      for (size_t i = 0; i < loop->second.size(); ++i) {
        if (!loop->second[i].split()) continue;
        state.mutable_tuple_shapes()[i].mutable_dimensions()[loop->second[i].dim] /= n;
        changed = true;
      }
      instruction->set_shape(state);
      for (Computation* called : instruction->called_computations()) {
        called->parameter_instruction(0)->set_shape(state);
      }
      continue;
    }
    if (instruction->opcode() == Opcode::kOptimizationBarrier &&
        instruction->operand(0)->opcode() == Opcode::kTuple) {
      instruction->set_shape(instruction->operand(0)->shape());  // it passes its tuple on
      continue;
    }
    if (instruction->opcode() != Opcode::kTuple) continue;
    std::vector<Shape> elements;
    for (const Instruction* operand : instruction->operands()) elements.push_back(operand->shape());
    Shape tuple = Shape::Tuple(std::move(elements));
    if (tuple.Compatible(instruction->shape())) continue;
    for (int64_t i = 0; i < tuple.tuple_shapes_size(); ++i) {
      if (instruction->shape().tuple_shapes(i).has_layout()) {
        tuple.mutable_tuple_shapes()[i].set_layout(*instruction->shape().tuple_shapes(i).layout());
      }
    }
    instruction->set_shape(std::move(tuple));
  }
  return changed;
}

// The axes of the mesh the module names (Shardy's `xla.sdy.meshes`
// frontend attribute, its one mesh, axes of size 1 left out), row-major over
// the partitions; empty where it names none, or one of fewer than two axes.
std::vector<MeshAxis> NamedMeshAxes(const Module& module) {
  const int64_t partitions = NumPartitions(module);
  for (const RawAttribute& attr : module.raw_attributes()) {
    if (attr.key != "frontend_attributes") continue;
    const std::string_view text = attr.value;
    constexpr std::string_view kMesh = "#sdy.mesh<[";
    const size_t at = text.find(kMesh);
    if (at == std::string_view::npos || text.find(kMesh, at + 1) != std::string_view::npos) {
      return {};
    }
    const size_t begin = at + kMesh.size(), end = text.find(']', begin);
    // A mesh over devices in another order ("device_ids=") is not modelled.
    if (end == std::string_view::npos || text.substr(end, 2) != "]>") return {};
    std::vector<int64_t> sizes;
    const std::vector<std::string> named =
        absl::StrSplit(std::string(text.substr(begin, end - begin)), ',');
    for (const std::string& axis : named) {
      int64_t size = 0;
      const size_t equals = axis.rfind('=');
      if (equals == std::string::npos || !absl::SimpleAtoi(axis.substr(equals + 1), &size) ||
          size < 1) {
        return {};
      }
      if (size > 1) sizes.push_back(size);
    }
    int64_t product = 1;
    for (int64_t size : sizes) product *= size;
    if (sizes.size() < 2 || product != partitions) return {};
    std::vector<MeshAxis> axes;
    int64_t stride = partitions;
    for (int64_t size : sizes) {
      stride /= size;
      axes.push_back({size, stride, partitions});
    }
    return axes;
  }
  return {};
}

// The meshes of two or more axes the module may be split on: the one it
// names; else (GSPMD's modules name none) each of the partitions laid out as
// a x b, a rising, along both axes of which every array sharding it writes
// reads.
std::vector<std::vector<MeshAxis>> CandidateMeshes(const Module& module) {
  std::vector<MeshAxis> named = NamedMeshAxes(module);
  if (!named.empty()) return {named};
  const int64_t partitions = NumPartitions(module);
  std::vector<std::vector<MeshAxis>> meshes;
  for (int64_t a = 2; a < partitions; ++a) {
    if (partitions % a != 0) continue;
    const std::vector<MeshAxis> axes = {{a, partitions / a, partitions},
                                        {partitions / a, 1, partitions}};
    bool reads = true;
    for (const auto& computation : module.computations()) {
      for (const auto& instruction : computation->instructions()) {
        const std::string_view sharding = ShardingText(*instruction);
        if (!reads || sharding.empty() || !instruction->shape().IsArray() ||
            sharding == "{manual}") {
          continue;
        }
        for (const MeshAxis& axis : axes) {
          reads = reads && PlacementFromSharding(sharding, instruction->shape(), axis).has_value();
        }
      }
    }
    if (reads) meshes.push_back(axes);
  }
  return meshes;
}

// Whether the module names a Shardy mesh (its shardings went through
// Shardy's propagation, whose round trip XLA's partitioner receives).
bool NamesShardyMesh(const Module& module) {
  for (const RawAttribute& attr : module.raw_attributes()) {
    if (attr.key == "frontend_attributes" &&
        attr.value.find("xla.sdy.meshes") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Shardy splits a constant-like value with several users into one per user
// (that each may take its own sharding), and XLA's CSE, as hlogym's, merges
// them back but for iotas, which it leaves apart: an iota with several users
// becomes one iota per user (the threefry counter's high and low halves).
void GiveEachIotaUserItsOwn(Module& module) {
  for (const auto& computation : module.computations()) {
    for (Instruction* iota : computation->MakeInstructionPostOrder()) {
      if (iota->opcode() != Opcode::kIota || iota->users().size() < 2) continue;
      const std::vector<Instruction*> users = iota->users();
      for (size_t u = 1; u < users.size(); ++u) {
        Instruction* copy = computation->AddInstruction(
            iota->CloneWithNewOperands({}, module.UniqueName(iota->name())));
        users[u]->ReplaceUsesOfOperand(iota, copy);
      }
    }
  }
}

// The array leaves of `shape`, depth first.
void AppendArrayLeaves(const Shape& shape, std::vector<Shape>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(shape);
    return;
  }
  for (const Shape& element : shape.tuple_shapes()) AppendArrayLeaves(element, leaves);
}

// The entry's parameter shapes, then its result's array leaves.
std::vector<Shape> EntryLeaves(const Module& module) {
  const Computation& entry = *module.entry_computation();
  std::vector<Shape> leaves;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    leaves.push_back(entry.parameter_instruction(i)->shape());
  }
  AppendArrayLeaves(entry.root_instruction()->shape(), leaves);
  return leaves;
}

// What splitting along each axis made: the inferences its plans rest on,
// and the tile each partition holds of each parameter and result leaf.
struct AxisSplits {
  std::vector<std::string> inferred;
  DataParallelTiles tiles;
};

// Splits the module along each axis in turn, the last (the minor one, where
// Megatron-style models split their weights) first, each planned on what
// the splits before it made, collectives over that axis's groups. An error
// where an axis cannot plan (the module then is partly split: callers try
// a copy first).
absl::StatusOr<AxisSplits> PartitionAlongEachAxis(Module& module,
                                                  const std::vector<MeshAxis>& axes) {
  AxisSplits splits;
  EarlierSlices earlier_slices;
  const std::vector<Shape> whole = EntryLeaves(module);
  const int64_t partitions = axes.front().partitions;
  splits.tiles.tile_index.assign(
      whole.size(), std::vector<std::vector<int64_t>>(partitions, std::vector<int64_t>()));
  for (size_t leaf = 0; leaf < whole.size(); ++leaf) {
    for (auto& index : splits.tiles.tile_index[leaf]) index.assign(whole[leaf].rank(), 0);
  }
  // The axes that split each value, a bit each (axes[a]: bit a).
  absl::flat_hash_map<const Instruction*, uint64_t> axes_splitting;
  for (size_t a = axes.size(); a-- > 0;) {
    HLOGYM_ASSIGN(plan, PlanDataParallel(module, axes[a]));
    const std::vector<Shape> before = EntryLeaves(module);
    HLOGYM_RETURN_IF_ERROR(
        ApplyDataParallel(module, plan, /*last_axis=*/a == 0, earlier_slices).status());
    for (const auto& [instruction, placement] : plan.placements) {
      if (placement.split()) axes_splitting[instruction] |= uint64_t{1} << a;
    }
    for (const auto& [slice, along] : earlier_slices) {
      if (along.axis.stride == axes[a].stride) axes_splitting[slice] |= uint64_t{1} << a;
    }
    splits.inferred.insert(splits.inferred.end(), plan.inferred.begin(), plan.inferred.end());
    const std::vector<Shape> after = EntryLeaves(module);
    if (after.size() != before.size()) {
      return absl::InternalError("the split changed the entry's parameters or result leaves");
    }
    for (size_t leaf = 0; leaf < after.size(); ++leaf) {
      for (int64_t d = 0; d < after[leaf].rank(); ++d) {
        if (after[leaf].dimensions(d) == before[leaf].dimensions(d)) continue;
        for (int64_t p = 0; p < partitions; ++p) {
          splits.tiles.tile_index[leaf][p][d] = axes[a].Coordinate(p);
        }
      }
    }
  }
  // A slice whose result every axis splits (a whole value read by tiles of
  // every axis) reads its offset from a table of every partition's, as XLA's
  // partitioner slices into a sharding with no replication; one read by
  // values whole along another axis keeps the coordinate's two tables.
  if (axes.size() > 1) {
    Computation& entry = *module.entry_computation();
    const uint64_t every_axis = (uint64_t{1} << axes.size()) - 1;
    for (auto& [slice, along] : earlier_slices) {
      // What splits the sliced value splits its slice too.
      if (along.per_partition_offsets ||
          (axes_splitting[slice] | axes_splitting[along.value]) != every_axis) {
        continue;
      }
      Instruction* split = const_cast<Instruction*>(slice);
      HLOGYM_ASSIGN(offset,
                    TableEntry(&entry, PrimitiveType::kS32,
                               along.axis.Offsets(split->shape().dimensions(along.dim)), nullptr));
      split->ReplaceOperandWith(1 + along.dim, offset);
    }
  }
  return splits;
}

// The mesh axes the module splits along: all its partitions as one where
// that plans, else each axis of its mesh in turn; why not where neither.
absl::StatusOr<std::vector<MeshAxis>> AxesThatSplit(const Module& module) {
  if (module.entry_computation() == nullptr) {
    return absl::FailedPreconditionError("the module has no entry computation");
  }
  const int64_t partitions = NumPartitions(module);
  const std::vector<MeshAxis> whole = {{partitions, 1, partitions}};
  absl::Status over_all = PlanDataParallel(module, whole.front()).status();
  if (over_all.ok()) return whole;
  // The reason on the first mesh where none splits it (the plan over all
  // partitions' where it has none).
  std::optional<absl::Status> first_reason;
  for (const std::vector<MeshAxis>& axes : CandidateMeshes(module)) {
    std::unique_ptr<Module> trial = module.Clone();
    absl::Status split = PartitionAlongEachAxis(*trial, axes).status();
    if (split.ok()) return axes;
    if (!first_reason) first_reason = split;
  }
  return first_reason.value_or(over_all);
}

}  // namespace

absl::Status CheckDataParallelPartitioning(const Module& module) {
  return AxesThatSplit(module).status();
}

std::string DataParallelInferences(const Module& module) {
  absl::StatusOr<std::vector<MeshAxis>> axes = AxesThatSplit(module);
  if (!axes.ok()) return "";
  std::unique_ptr<Module> split = module.Clone();
  absl::StatusOr<AxisSplits> splits = PartitionAlongEachAxis(*split, *axes);
  if (!splits.ok() || splits->inferred.empty()) return "";
  const std::vector<std::string>& inferred = splits->inferred;
  std::string note = inferred.front();
  if (inferred.size() > 1) absl::StrAppend(&note, " (and ", inferred.size() - 1, " more)");
  return note;
}

absl::StatusOr<DataParallelTiles> TilesOfDataParallelSplit(const Module& module) {
  HLOGYM_ASSIGN(axes, AxesThatSplit(module));
  std::unique_ptr<Module> split = module.Clone();
  HLOGYM_ASSIGN(splits, PartitionAlongEachAxis(*split, axes));
  return splits.tiles;
}

absl::StatusOr<bool> PartitionDataParallel(Module& module) {
  absl::StatusOr<std::vector<MeshAxis>> axes = AxesThatSplit(module);
  if (!axes.ok()) return false;
  if (NamesShardyMesh(module)) GiveEachIotaUserItsOwn(module);
  HLOGYM_RETURN_IF_ERROR(PartitionAlongEachAxis(module, *axes).status());
  return true;
}

}  // namespace hlogym
