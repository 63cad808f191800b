#include "passes/collectives/all_to_all_decomposer.h"

#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// The integers in `text`, in order.
std::vector<int64_t> Integers(std::string_view text) {
  std::vector<int64_t> values;
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    int64_t value = 0;
    if (absl::SimpleAtoi(std::string(text.substr(i, end - i)), &value)) values.push_back(value);
    i = end;
  }
  return values;
}

// Participants per group: the first group's size in `replica_groups` (the
// list form "{{0,1},{2,3}}" or the iota form "[groups,size]<=[...]"), or
// the module's replica_count when there are no groups.
std::optional<int64_t> GroupSize(const Instruction& all_to_all) {
  const RawAttribute* groups = all_to_all.attrs().FindRaw("replica_groups");
  std::string_view text = groups == nullptr ? "" : std::string_view(groups->value);
  if (!text.empty() && text.front() == '[') {
    std::vector<int64_t> dims = Integers(text.substr(0, text.find(']')));
    if (dims.size() != 2) return std::nullopt;
    return dims[1];
  }
  const size_t open = text.find('{', 1);
  if (open != std::string_view::npos) {
    const size_t close = text.find('}', open);
    if (close == std::string_view::npos) return std::nullopt;
    return static_cast<int64_t>(Integers(text.substr(open, close - open)).size());
  }
  const Module* module = all_to_all.parent()->parent();
  for (const RawAttribute& attr : module->raw_attributes()) {
    if (attr.key != "replica_count") continue;
    int64_t count = 0;
    if (!absl::SimpleAtoi(attr.value, &count)) return std::nullopt;
    return count;
  }
  return 1;
}

bool Matches(const Instruction* instruction) {
  if (instruction->opcode() != Opcode::kAllToAll || !instruction->shape().IsArray()) {
    return false;
  }
  const RawAttribute* constrain = instruction->attrs().FindRaw("constrain_layout");
  return constrain == nullptr || constrain->value != "true";
}

absl::StatusOr<Instruction*> Decompose(Instruction* all_to_all) {
  const Shape& shape = all_to_all->shape();
  const std::vector<int64_t>& split = all_to_all->attrs().dimensions;
  std::optional<int64_t> group_size = GroupSize(*all_to_all);
  if (all_to_all->operand_count() != 1 || split.size() != 1 || split[0] < 0 ||
      split[0] >= shape.rank() || !group_size.has_value() || *group_size <= 0 ||
      shape.dimensions(split[0]) % *group_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        all_to_all->name(),
        ": an array all-to-all needs one operand and a split dimension divisible by the group "
        "size"));
  }
  const int64_t split_dim = split[0];
  const int64_t split_size = shape.dimensions(split_dim) / *group_size;
  Instruction* operand = all_to_all->operand(0);
  std::vector<SliceDimension> slice(shape.rank());
  for (int64_t d = 0; d < shape.rank(); ++d) slice[d].limit = shape.dimensions(d);
  std::vector<Instruction*> slices;
  std::vector<Shape> slice_shapes;
  for (int64_t i = 0; i < *group_size; ++i) {
    slice[split_dim] = SliceDimension{i * split_size, (i + 1) * split_size, 1};
    HLOGYM_ASSIGN(part, MakeSlice(operand, slice));
    slices.push_back(part);
    slice_shapes.push_back(part->shape());
  }
  auto tuple = std::make_unique<Instruction>(Opcode::kAllToAll, Shape::Tuple(slice_shapes));
  for (Instruction* part : slices) tuple->AppendOperand(part);
  for (const char* key : {"channel_id", "replica_groups"}) {
    if (const RawAttribute* attr = all_to_all->attrs().FindRaw(key)) {
      tuple->mutable_attrs().raw.push_back(*attr);
    }
  }
  Instruction* exchanged = AddWithLayoutOf(all_to_all->parent(), std::move(tuple), operand);
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < *group_size; ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(exchanged, i));
    elements.push_back(element);
  }
  return MakeConcatenate(elements, split_dim);
}

}  // namespace

bool AllToAllDecomposer::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kAllToAll});
}

absl::StatusOr<bool> AllToAllDecomposer::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), Matches, Decompose);
}

}  // namespace hlogym
