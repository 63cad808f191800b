#include "passes/types/sub_byte_normalization.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

// The element size XLA's SET_ELEMENT_SIZE mode gives `type`; 0 for none.
int ElementSizeInBits(PrimitiveType type) {
  const int bits = BitWidth(type);
  return type != PrimitiveType::kPred && bits < 8 ? bits : 0;
}

// `details` (the layout text after ':') with its E(...) item set to
// E(`bits`), or removed when `bits` is 0. Items are a prefix followed by
// parenthesized groups ("T(8,128)(2,1)", "E(4)", "S(1)").
std::string WithElementSize(std::string_view details, int bits) {
  std::vector<std::string_view> items;
  size_t i = 0;
  while (i < details.size()) {
    const size_t start = i;
    while (i < details.size() && details[i] != '(') ++i;
    while (i < details.size() && details[i] == '(') {
      int depth = 0;
      do {
        if (details[i] == '(') ++depth;
        if (details[i] == ')') --depth;
        ++i;
      } while (i < details.size() && depth > 0);
    }
    items.push_back(details.substr(start, i - start));
  }
  std::string result;
  bool placed = bits == 0;
  for (std::string_view item : items) {
    const std::string_view prefix = item.substr(0, item.find('('));
    if (prefix == "E") continue;
    if (!placed && (prefix == "S" || prefix == "SC" || prefix == "P" || prefix == "M")) {
      absl::StrAppend(&result, "E(", bits, ")");
      placed = true;
    }
    absl::StrAppend(&result, std::string(item));
  }
  if (!placed) absl::StrAppend(&result, "E(", bits, ")");
  return result;
}

// Whether UpdateShape would change `shape` (checked first, so unchanged
// shapes, shared copy-on-write with module clones, are not copied).
bool NeedsUpdate(const Shape& shape) {
  if (shape.IsTuple()) {
    return std::any_of(shape.tuple_shapes().begin(), shape.tuple_shapes().end(),
                       [](const Shape& element) { return NeedsUpdate(element); });
  }
  if (!shape.IsArray() || !shape.has_layout()) return false;
  const std::string& details = shape.layout()->details;
  return WithElementSize(details, ElementSizeInBits(shape.element_type())) != details;
}

bool UpdateShape(Shape& shape) {
  if (shape.IsTuple()) {
    bool changed = false;
    for (Shape& element : shape.mutable_tuple_shapes()) changed |= UpdateShape(element);
    return changed;
  }
  if (!shape.IsArray() || !shape.has_layout()) return false;
  Layout layout = *shape.layout();
  std::string details = WithElementSize(layout.details, ElementSizeInBits(shape.element_type()));
  if (details == layout.details) return false;
  layout.details = std::move(details);
  shape.set_layout(std::move(layout));
  return true;
}

// The same update on the shapes written in entry_computation_layout's text:
// each "type[dims]{layout}" gets its layout's element size set.
std::string UpdateLayoutText(std::string_view text) {
  std::string result;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    if (open == std::string_view::npos || open == 0 || text[open - 1] != ']') {
      if (open == std::string_view::npos) break;
      result.append(text.substr(i, open + 1 - i));
      i = open + 1;
      continue;
    }
    const size_t close = text.find('}', open);
    const size_t bracket = text.rfind('[', open);
    if (close == std::string_view::npos || bracket == std::string_view::npos) break;
    size_t type_start = bracket;
    while (type_start > 0 && std::isalnum(static_cast<unsigned char>(text[type_start - 1]))) {
      --type_start;
    }
    auto type = PrimitiveTypeFromName(text.substr(type_start, bracket - type_start));
    std::string_view layout = text.substr(open + 1, close - open - 1);
    const size_t colon = layout.find(':');
    result.append(text.substr(i, open + 1 - i));
    if (!type.has_value()) {
      result.append(layout);
    } else {
      const std::string_view old_details =
          colon == std::string_view::npos ? "" : layout.substr(colon + 1);
      const std::string details = WithElementSize(old_details, ElementSizeInBits(*type));
      result.append(layout.substr(0, colon));
      if (!details.empty()) absl::StrAppend(&result, ":", details);
    }
    result.push_back('}');
    i = close + 1;
  }
  result.append(text.substr(std::min(i, text.size())));
  return result;
}

}  // namespace

absl::StatusOr<bool> SubByteSizeSetter::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (NeedsUpdate(instruction->shape())) {
        changed |= UpdateShape(instruction->mutable_shape());
      }
    }
  }
  // Read first, write only on a change (the header is shared with clones).
  for (size_t i = 0; i < module.raw_attributes().size(); ++i) {
    const RawAttribute& attr = module.raw_attributes()[i];
    if (attr.key != "entry_computation_layout") continue;
    std::string updated = UpdateLayoutText(attr.value);
    if (updated == attr.value) continue;
    module.mutable_raw_attributes()[i].value = std::move(updated);
    changed = true;
  }
  return changed;
}

// Keyed on layouts, not opcodes: the read-only half of Run.
bool SubByteSizeSetter::MayChange(const Module& module) const {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (NeedsUpdate(instruction->shape())) return true;
    }
  }
  for (const RawAttribute& attr : module.raw_attributes()) {
    if (attr.key == "entry_computation_layout" && UpdateLayoutText(attr.value) != attr.value) {
      return true;
    }
  }
  return false;
}

}  // namespace hlogym
