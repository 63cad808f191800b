#include "hlo/scan_attributes.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "hlo/computation.h"

namespace hlogym {
namespace {

absl::Status Bad(const Instruction& scan, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("scan ", scan.name(), ": ", what));
}

// A decimal integer, whole string.
std::optional<int64_t> ParseInteger(std::string text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(value);
}

std::optional<bool> ParseBool(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return std::nullopt;
}

// The values a shape stands for: the tuple's elements, or itself.
std::vector<Shape> Values(const Shape& shape) {
  if (shape.IsTuple()) return shape.tuple_shapes();
  return {shape};
}

}  // namespace

absl::StatusOr<ScanAttributes> ReadScanAttributes(const Instruction& scan) {
  ScanAttributes a;
  const InstructionAttributes& attrs = scan.attrs();
  const RawAttribute* dims = attrs.FindRaw("dimensions");
  if (dims == nullptr) return Bad(scan, "missing dimensions={d}");
  std::string d = dims->value;
  if (d.size() < 2 || d.front() != '{' || d.back() != '}') {
    return Bad(scan, "dimensions must be {d}, got " + d);
  }
  auto dim = ParseInteger(d.substr(1, d.size() - 2));
  if (!dim) return Bad(scan, "dimensions must hold exactly one dimension, got " + d);
  a.scan_dimension = *dim;
  if (const RawAttribute* n = attrs.FindRaw("num_carries")) {
    auto carries = ParseInteger(n->value);
    if (!carries) return Bad(scan, "num_carries is not an integer: " + n->value);
    a.num_carries = *carries;
  }
  if (const RawAttribute* r = attrs.FindRaw("is_reverse")) {
    auto reverse = ParseBool(r->value);
    if (!reverse) return Bad(scan, "is_reverse must be true or false, got " + r->value);
    a.is_reverse = *reverse;
  }
  if (const RawAttribute* r = attrs.FindRaw("is_associative")) {
    auto associative = ParseBool(r->value);
    if (!associative) return Bad(scan, "is_associative must be true or false, got " + r->value);
    a.is_associative = *associative;
  }
  if (a.num_carries < 0 || a.num_carries > scan.operand_count()) {
    return Bad(scan, absl::StrCat("has ", a.num_carries, " carries but ", scan.operand_count(),
                                  " operands"));
  }
  a.num_inputs = scan.operand_count() - a.num_carries;
  if (a.num_inputs == 0) {
    return absl::UnimplementedError(
        absl::StrCat("scan ", scan.name(), ": scans without inputs are not supported"));
  }
  const Computation* body = scan.to_apply();
  if (body == nullptr || scan.called_computations().size() != 1) {
    return Bad(scan, "needs exactly one to_apply computation");
  }
  // Inputs: arrays sharing the length of the scan dimension.
  std::vector<Shape> parameter_shapes;
  for (int64_t i = 0; i < a.num_inputs; ++i) {
    const Shape& input = scan.operand(i)->shape();
    if (!input.IsArray()) return Bad(scan, absl::StrCat("input ", i, " is not an array"));
    if (a.scan_dimension < 0 || a.scan_dimension >= input.rank()) {
      return Bad(scan, absl::StrCat("scan dimension ", a.scan_dimension,
                                    " is out of range for input ", i, " ", input.ToString()));
    }
    if (input.is_dynamic_dimension(a.scan_dimension)) {
      return absl::UnimplementedError(
          absl::StrCat("scan ", scan.name(), ": a dynamic scan dimension is not supported"));
    }
    const int64_t length = input.dimensions(a.scan_dimension);
    if (i == 0) a.length = length;
    if (length != a.length) return Bad(scan, "inputs disagree on the scan dimension's size");
    std::vector<int64_t> slice_dims;
    for (int64_t k = 0; k < input.rank(); ++k) {
      if (k != a.scan_dimension) slice_dims.push_back(input.dimensions(k));
    }
    parameter_shapes.push_back(Shape(input.element_type(), std::move(slice_dims)));
  }
  for (int64_t i = a.num_inputs; i < scan.operand_count(); ++i) {
    parameter_shapes.push_back(scan.operand(i)->shape());
  }
  if (body->num_parameters() != static_cast<int64_t>(parameter_shapes.size())) {
    return Bad(scan, absl::StrCat("to_apply ", body->name(), " takes ", body->num_parameters(),
                                  " parameters, the operands need ", parameter_shapes.size()));
  }
  for (size_t k = 0; k < parameter_shapes.size(); ++k) {
    if (!body->parameter_instruction(k)->shape().Compatible(parameter_shapes[k])) {
      return Bad(scan, absl::StrCat("to_apply parameter ", k, " is ",
                                    body->parameter_instruction(k)->shape().ToString(false),
                                    ", the operands give ", parameter_shapes[k].ToString(false)));
    }
  }
  if (body->root_instruction() == nullptr) return Bad(scan, "to_apply has no root");
  const std::vector<Shape> body_results = Values(body->root_instruction()->shape());
  const std::vector<Shape> results = Values(scan.shape());
  if (static_cast<int64_t>(body_results.size()) < a.num_carries) {
    return Bad(scan, "to_apply returns fewer values than there are carries");
  }
  a.num_outputs = static_cast<int64_t>(body_results.size()) - a.num_carries;
  if (results.size() != body_results.size()) {
    return Bad(scan, absl::StrCat("returns ", results.size(), " values, to_apply returns ",
                                  body_results.size()));
  }
  for (int64_t k = 0; k < static_cast<int64_t>(results.size()); ++k) {
    Shape expected = body_results[k];
    if (k < a.num_outputs) {
      if (!expected.IsArray() || a.scan_dimension > expected.rank()) {
        return Bad(scan, absl::StrCat("to_apply output ", k, " cannot be stacked along dimension ",
                                      a.scan_dimension));
      }
      std::vector<int64_t> stacked(expected.dimensions().begin(), expected.dimensions().end());
      stacked.insert(stacked.begin() + a.scan_dimension, a.length);
      expected = Shape(expected.element_type(), std::move(stacked));
    } else {
      const Shape& init = scan.operand(a.num_inputs + (k - a.num_outputs))->shape();
      if (!body_results[k].Compatible(init)) {
        return Bad(scan, absl::StrCat("to_apply carry result ", k - a.num_outputs, " is ",
                                      body_results[k].ToString(false), ", its init is ",
                                      init.ToString(false)));
      }
    }
    if (!results[k].Compatible(expected)) {
      return Bad(scan, absl::StrCat("result ", k, " is ", results[k].ToString(false), ", expected ",
                                    expected.ToString(false)));
    }
  }
  a.result_shapes = results;
  return a;
}

}  // namespace hlogym
