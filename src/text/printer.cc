// Printer for XLA's HLO text format, modelled on what XLA's
// HloModule::ToString writes (see printer.h).
#include "text/printer.h"

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "hlo/attributes.h"
#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "text/str_util.h"

namespace hlogym {
namespace {

using text::Append;
using text::Cat;

void AppendName(std::string* out, std::string_view name, const PrintOptions& options) {
  if (options.print_percent) out->push_back('%');
  out->append(name);
}

template <typename T>
void AppendJoined(std::string* out, const std::vector<T>& values, std::string_view sep) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out->append(sep);
    Append(out, values[i]);
  }
}

void AppendIntList(std::string* out, std::string_view key, const std::vector<int64_t>& values) {
  Append(out, ", ", key, "={");
  AppendJoined(out, values, ",");
  out->push_back('}');
}

std::string WindowToString(const Window& window) {
  const auto& dims = window.dimensions;
  std::string out;
  if (dims.empty()) return out;
  auto field = [&](std::string_view name, auto get) {
    if (!out.empty()) out.push_back(' ');
    Append(&out, name, "=");
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i > 0) out.push_back('x');
      get(dims[i]);
    }
  };
  field("size", [&](const WindowDimension& d) { Append(&out, d.size); });
  bool any_stride = false, any_pad = false, any_lhs = false, any_rhs = false, any_rev = false;
  for (const WindowDimension& d : dims) {
    any_stride |= d.stride != 1;
    any_pad |= d.padding_low != 0 || d.padding_high != 0;
    any_lhs |= d.base_dilation != 1;
    any_rhs |= d.window_dilation != 1;
    any_rev |= d.window_reversal;
  }
  if (any_stride) field("stride", [&](const WindowDimension& d) { Append(&out, d.stride); });
  if (any_pad) {
    field("pad",
          [&](const WindowDimension& d) { Append(&out, d.padding_low, "_", d.padding_high); });
  }
  if (any_lhs)
    field("lhs_dilate", [&](const WindowDimension& d) { Append(&out, d.base_dilation); });
  if (any_rhs)
    field("rhs_dilate", [&](const WindowDimension& d) { Append(&out, d.window_dilation); });
  if (any_rev) {
    field("rhs_reversal",
          [&](const WindowDimension& d) { Append(&out, d.window_reversal ? 1 : 0); });
  }
  return out;
}

// "b01f_01io->b01f"; empty when the numbers are inconsistent.
std::string ConvDimsToString(const ConvolutionDimensionNumbers& d) {
  auto part = [](int64_t a, char ca, int64_t b, char cb, const std::vector<int64_t>& spatial,
                 std::string* out) {
    int64_t rank = static_cast<int64_t>(spatial.size()) + 2;
    std::string s(rank, '?');
    auto put = [&](int64_t pos, char c) {
      if (pos >= 0 && pos < rank) s[pos] = c;
    };
    put(a, ca);
    put(b, cb);
    for (size_t i = 0; i < spatial.size(); ++i) {
      put(spatial[i], i < 10 ? static_cast<char>('0' + i) : '?');
    }
    out->append(s);
  };
  std::string out;
  part(d.input_batch_dimension, 'b', d.input_feature_dimension, 'f', d.input_spatial_dimensions,
       &out);
  out.push_back('_');
  part(d.kernel_input_feature_dimension, 'i', d.kernel_output_feature_dimension, 'o',
       d.kernel_spatial_dimensions, &out);
  out.append("->");
  part(d.output_batch_dimension, 'b', d.output_feature_dimension, 'f', d.output_spatial_dimensions,
       &out);
  return out;
}

std::string FloatToString(float value) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, ptr);
}

void AppendOperandPrecision(std::string* out, const std::vector<Precision>& precision) {
  bool any = false;
  for (Precision p : precision) any |= p != Precision::kDefault;
  if (!any) return;
  out->append(", operand_precision={");
  for (size_t i = 0; i < precision.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(PrecisionName(precision[i]));
  }
  out->push_back('}');
}

void AppendTypedAttributes(std::string* out, const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  const Opcode op = inst.opcode();
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReduce:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kMap:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllToAll:
    case Opcode::kReduceScatter:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
      if (a.has_dimensions || RequiresDimensionsAttribute(op))
        AppendIntList(out, "dimensions", a.dimensions);
      break;
    case Opcode::kSort:
      AppendIntList(out, "dimensions", a.dimensions);
      if (a.is_stable) out->append(", is_stable=true");
      break;
    case Opcode::kSlice:
      out->append(", slice={");
      for (size_t i = 0; i < a.slice.size(); ++i) {
        const SliceDimension& s = a.slice[i];
        if (i > 0) out->append(", ");
        Append(out, "[", s.start, ":", s.limit);
        if (s.stride != 1) Append(out, ":", s.stride);
        out->push_back(']');
      }
      out->push_back('}');
      break;
    case Opcode::kDynamicSlice:
      AppendIntList(out, "dynamic_slice_sizes", a.dynamic_slice_sizes);
      break;
    case Opcode::kPad: {
      bool interior = false;
      for (const PaddingDimension& p : a.padding) interior |= p.interior != 0;
      out->append(", padding=");
      for (size_t i = 0; i < a.padding.size(); ++i) {
        const PaddingDimension& p = a.padding[i];
        if (i > 0) out->push_back('x');
        Append(out, p.low, "_", p.high);
        if (interior) Append(out, "_", p.interior);
      }
      break;
    }
    case Opcode::kConvolution:
      if (a.window.has_value()) Append(out, ", window={", WindowToString(*a.window), "}");
      if (a.convolution_dimension_numbers.has_value()) {
        Append(out, ", dim_labels=", ConvDimsToString(*a.convolution_dimension_numbers));
      }
      if (a.feature_group_count != 1) Append(out, ", feature_group_count=", a.feature_group_count);
      if (a.batch_group_count != 1) Append(out, ", batch_group_count=", a.batch_group_count);
      AppendOperandPrecision(out, a.operand_precision);
      break;
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
      if (a.window.has_value()) Append(out, ", window={", WindowToString(*a.window), "}");
      break;
    case Opcode::kDot:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot:
      if (a.dot_dimension_numbers.has_value()) {
        const DotDimensionNumbers& d = *a.dot_dimension_numbers;
        if (!d.lhs_batch_dimensions.empty())
          AppendIntList(out, "lhs_batch_dims", d.lhs_batch_dimensions);
        AppendIntList(out, "lhs_contracting_dims", d.lhs_contracting_dimensions);
        if (!d.rhs_batch_dimensions.empty())
          AppendIntList(out, "rhs_batch_dims", d.rhs_batch_dimensions);
        AppendIntList(out, "rhs_contracting_dims", d.rhs_contracting_dimensions);
      }
      if (op == Opcode::kRaggedDot && a.ragged_dot_dimension_numbers.has_value()) {
        const RaggedDotDimensionNumbers& r = *a.ragged_dot_dimension_numbers;
        AppendIntList(out, "lhs_ragged_dims", r.lhs_ragged_dimensions);
        if (!r.rhs_group_dimensions.empty())
          AppendIntList(out, "rhs_group_dims", r.rhs_group_dimensions);
      }
      AppendOperandPrecision(out, a.operand_precision);
      break;
    case Opcode::kGather:
      if (a.gather_dimension_numbers.has_value()) {
        const GatherDimensionNumbers& g = *a.gather_dimension_numbers;
        AppendIntList(out, "offset_dims", g.offset_dims);
        AppendIntList(out, "collapsed_slice_dims", g.collapsed_slice_dims);
        AppendIntList(out, "start_index_map", g.start_index_map);
        if (!g.operand_batching_dims.empty())
          AppendIntList(out, "operand_batching_dims", g.operand_batching_dims);
        if (!g.start_indices_batching_dims.empty()) {
          AppendIntList(out, "start_indices_batching_dims", g.start_indices_batching_dims);
        }
        Append(out, ", index_vector_dim=", g.index_vector_dim);
      }
      AppendIntList(out, "slice_sizes", a.gather_slice_sizes);
      if (a.indices_are_sorted) out->append(", indices_are_sorted=true");
      break;
    case Opcode::kScatter:
      if (a.scatter_dimension_numbers.has_value()) {
        const ScatterDimensionNumbers& s = *a.scatter_dimension_numbers;
        AppendIntList(out, "update_window_dims", s.update_window_dims);
        AppendIntList(out, "inserted_window_dims", s.inserted_window_dims);
        AppendIntList(out, "scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims);
        if (!s.input_batching_dims.empty())
          AppendIntList(out, "input_batching_dims", s.input_batching_dims);
        if (!s.scatter_indices_batching_dims.empty()) {
          AppendIntList(out, "scatter_indices_batching_dims", s.scatter_indices_batching_dims);
        }
        Append(out, ", index_vector_dim=", s.index_vector_dim);
      }
      if (a.indices_are_sorted) out->append(", indices_are_sorted=true");
      if (a.unique_indices) out->append(", unique_indices=true");
      break;
    case Opcode::kCompare:
      Append(out, ", direction=", ComparisonDirectionName(a.comparison_direction));
      if (a.comparison_type != ComparisonType::kUnset) {
        Append(out, ", type=", ComparisonTypeName(a.comparison_type));
      }
      break;
    case Opcode::kFusion:
      Append(out, ", kind=", FusionKindName(a.fusion_kind));
      break;
    case Opcode::kCustomCall: {
      std::string escaped = absl::CEscape(a.custom_call_target);
      Append(out, ", custom_call_target=\"", escaped, "\"");
      break;
    }
    case Opcode::kRng:
      Append(out, ", distribution=", RandomDistributionName(a.rng_distribution));
      break;
    case Opcode::kRngBitGenerator:
      Append(out, ", algorithm=", RandomAlgorithmName(a.rng_algorithm));
      break;
    case Opcode::kReducePrecision:
      Append(out, ", exponent_bits=", a.exponent_bits, ", mantissa_bits=", a.mantissa_bits);
      break;
    case Opcode::kFft:
      Append(out, ", fft_type=", FftTypeName(a.fft_type));
      AppendIntList(out, "fft_length", a.fft_length);
      break;
    case Opcode::kTriangularSolve:
      if (a.left_side) out->append(", left_side=true");
      if (a.lower) out->append(", lower=true");
      if (a.unit_diagonal) out->append(", unit_diagonal=true");
      // Always: XLA's parser leaves an absent transpose_a invalid (its proto's zero), which its
      // StableHLO import then rejects.
      Append(out, ", transpose_a=", TriangularSolveTransposeName(a.transpose_a));
      break;
    case Opcode::kCholesky:
      if (a.lower) out->append(", lower=true");
      break;
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
      Append(out, ", epsilon=", FloatToString(a.epsilon), ", feature_index=", a.feature_index);
      break;
    case Opcode::kTopK:
      Append(out, ", k=", a.k, ", largest=", a.largest ? "true" : "false");
      break;
    case Opcode::kGetTupleElement:
      Append(out, ", index=", a.tuple_index);
      break;
    case Opcode::kIota:
      Append(out, ", iota_dimension=", a.iota_dimension);
      break;
    default:
      break;
  }
}

void AppendCalledComputations(std::string* out, const Instruction& inst,
                              const PrintOptions& options) {
  const std::vector<Computation*>& called = inst.called_computations();
  if (called.empty()) return;
  auto one = [&](std::string_view key, const Computation* c) {
    Append(out, ", ", key, "=");
    AppendName(out, c->name(), options);
  };
  auto list = [&](std::string_view key) {
    Append(out, ", ", key, "={");
    for (size_t i = 0; i < called.size(); ++i) {
      if (i > 0) out->append(", ");
      AppendName(out, called[i]->name(), options);
    }
    out->push_back('}');
  };
  switch (inst.opcode()) {
    case Opcode::kWhile:
      if (called.size() == 2) {
        one("condition", called[0]);
        one("body", called[1]);
        return;
      }
      break;
    case Opcode::kConditional:
      if (called.size() == 2 && inst.operand_count() > 0 &&
          inst.operand(0)->shape().element_type() == PrimitiveType::kPred) {
        one("true_computation", called[0]);
        one("false_computation", called[1]);
      } else {
        list("branch_computations");
      }
      return;
    case Opcode::kSelectAndScatter:
      if (called.size() == 2) {
        one("select", called[0]);
        one("scatter", called[1]);
        return;
      }
      break;
    case Opcode::kCustomCall:
      list("called_computations");
      return;
    case Opcode::kFusion:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      if (called.size() == 1) {
        one("calls", called[0]);
        return;
      }
      break;
    default:
      if (called.size() == 1) {
        one("to_apply", called[0]);
        return;
      }
      break;
  }
  // Unusual counts: one attribute per computation would not reparse in the
  // same order for every opcode, so fall back to the generic forms.
  for (const Computation* c : called) one("to_apply", c);
}

void AppendInstruction(std::string* out, const Instruction& inst, const PrintOptions& options) {
  if (inst.IsRoot()) out->append("ROOT ");
  AppendName(out, inst.name(), options);
  Append(out, " = ", inst.shape().ToString(true), " ", OpcodeName(inst.opcode()), "(");
  const InstructionAttributes& a = inst.attrs();
  if (inst.opcode() == Opcode::kParameter) {
    Append(out, a.parameter_number);
  } else if (inst.opcode() == Opcode::kConstant) {
    if (a.literal == nullptr) {
      out->append("{...}");
    } else if (!options.print_large_constants && a.literal->shape().IsArray() &&
               a.literal->element_count() > 10) {
      out->append("{...}");
    } else {
      out->append(a.literal->ValueToString());
    }
  } else {
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (i > 0) out->append(", ");
      if (i % 5 == 0 && i > 0) Append(out, "/*index=", i, "*/");
      const Instruction* operand = inst.operand(i);
      if (options.print_operand_shapes) Append(out, operand->shape().ToString(true), " ");
      AppendName(out, operand->name(), options);
    }
  }
  out->push_back(')');
  AppendTypedAttributes(out, inst);
  AppendCalledComputations(out, inst, options);
  if (!inst.control_predecessors().empty()) {
    out->append(", control-predecessors={");
    for (size_t i = 0; i < inst.control_predecessors().size(); ++i) {
      if (i > 0) out->append(", ");
      AppendName(out, inst.control_predecessors()[i]->name(), options);
    }
    out->push_back('}');
  }
  if (options.print_raw_attributes) {
    for (const RawAttribute& raw : a.raw) {
      if (!options.print_metadata && raw.key == "metadata") continue;
      Append(out, ", ", raw.key, "=", raw.value);
    }
  }
}

void AppendComputation(std::string* out, const Computation& computation,
                       const PrintOptions& options) {
  if (computation.IsEntry()) out->append("ENTRY ");
  AppendName(out, computation.name(), options);
  out->append(" (");
  const std::vector<Instruction*>& params = computation.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) out->append(", ");
    if (params[i] == nullptr) {
      out->append("missing: f32[]");
      continue;
    }
    Append(out, params[i]->name(), ": ", params[i]->shape().ToString(false));
  }
  out->append(") -> ");
  const Instruction* root = computation.root_instruction();
  out->append(root != nullptr ? root->shape().ToString(false) : "()");
  for (const RawAttribute& raw : computation.raw_attributes()) {
    Append(out, ", ", raw.key, "=", raw.value);
  }
  out->append(" {\n");
  for (const Instruction* inst : computation.MakeInstructionPostOrder()) {
    out->append("  ");
    AppendInstruction(out, *inst, options);
    out->push_back('\n');
  }
  out->append("}");
}

}  // namespace

std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options) {
  std::string out;
  AppendInstruction(&out, instruction, options);
  return out;
}

std::string PrintComputation(const Computation& computation, const PrintOptions& options) {
  std::string out;
  AppendComputation(&out, computation, options);
  out.push_back('\n');
  return out;
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out;
  Append(&out, "HloModule ", module.name());
  for (const RawAttribute& raw : module.raw_attributes()) {
    Append(&out, ", ", raw.key, "=", raw.value);
  }
  out.append("\n\n");
  // XLA writes the stack-frame tables between the header and the
  // computations.
  if (!module.trailer().empty()) {
    out.append(module.trailer());
    out.append("\n\n\n");
  }
  // Callees first: XLA's parser rejects a call to a computation it has not
  // read yet.
  const std::vector<Computation*> computations = module.ComputationsCalleesFirst();
  for (size_t i = 0; i < computations.size(); ++i) {
    if (i > 0) out.append("\n\n");
    AppendComputation(&out, *computations[i], options);
  }
  out.push_back('\n');
  return out;
}

}  // namespace hlogym
