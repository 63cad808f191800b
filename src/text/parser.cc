// Recursive-descent parser for XLA's HLO text format (see parser.h).
//
// One pass over the text with the character-level Lexer. Operand and
// control-predecessor names are resolved when a computation ends (operands
// may be written before they are defined); called computations are resolved
// when the module ends. Every failure is an InvalidArgument status
// "FILE:LINE:COL: error: ..."; nothing asserts, and nesting, integer sizes
// and constant sizes are bounded.
#include "text/parser.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "hlo/attributes.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "hlo/opcode.h"
#include "text/lexer.h"
#include "text/str_util.h"

namespace hlogym {
namespace {

using text::Cat;
using text::IsDigit;
using text::IsNameChar;
using text::Lexer;
using text::LexError;

constexpr int kMaxNesting = 64;                     // tuple shapes, tuple constants
constexpr int64_t kMaxElements = int64_t{1} << 53;  // per array shape
constexpr int64_t kMaxConstantBytes = int64_t{1} << 31;
constexpr int64_t kMaxParameterNumber = int64_t{1} << 20;

// Bytes a literal of `shape` occupies unpacked, saturating at
// kMaxConstantBytes + 1 so that huge shapes never overflow.
int64_t LiteralBytes(const Shape& shape) {
  const int64_t cap = kMaxConstantBytes + 1;
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) {
      total += LiteralBytes(s);
      if (total >= cap) return cap;
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  int64_t bytes = ByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) {
    if (d == Shape::kUnboundedSize || d == 0) return d == 0 ? 0 : bytes;
  }
  for (int64_t d : shape.dimensions()) {
    if (bytes > cap / d) return cap;
    bytes *= d;
  }
  return bytes < cap ? bytes : cap;
}

bool IsStackFrameSection(std::string_view word) {
  return word == "FileNames" || word == "FunctionNames" || word == "FileLocations" ||
         word == "StackFrames";
}

// Which opcodes model which typed attribute; anything else is kept raw.
bool HasDimensionsAttr(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReduce:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kSort:
    case Opcode::kMap:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllToAll:
    case Opcode::kReduceScatter:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
      return true;
    default:
      return false;
  }
}
bool IsDotLike(Opcode op) {
  return op == Opcode::kDot || op == Opcode::kRaggedDot || op == Opcode::kScaledDot;
}
bool HasWindowAttr(Opcode op) {
  return op == Opcode::kConvolution || op == Opcode::kReduceWindow ||
         op == Opcode::kSelectAndScatter;
}

struct NameRef {
  std::string_view name;
  size_t pos;
};

// Called computations of one instruction, by attribute, before resolution.
struct PendingCalls {
  Instruction* instruction = nullptr;
  size_t pos = 0;  // the opcode, for "missing attribute" errors
  std::vector<NameRef> to_apply, calls, condition, body, branches, true_c, false_c, select, scatter,
      called;
};

struct PendingInstruction {
  Instruction* instruction;
  size_t name_pos;
  std::vector<NameRef> operands;
  std::vector<NameRef> control_predecessors;
};

// A computation's instructions by name: the instruction and its index in the text.
using InstructionNames = absl::flat_hash_map<std::string_view, std::pair<Instruction*, size_t>>;

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename) : lex_(text), filename_(filename) {}

  absl::StatusOr<std::unique_ptr<Module>> ParseModule();
  absl::StatusOr<Shape> ParseShapeOnly();

 private:
  // Errors: the first one wins.
  bool Error(size_t pos, std::string_view message) {
    if (status_.ok()) {
      int64_t line, col;
      lex_.LineCol(pos, &line, &col);
      status_ =
          absl::InvalidArgumentError(Cat(filename_, ":", line, ":", col, ": error: ", message));
    }
    return false;
  }
  bool LexFail(const LexError& e) { return Error(e.pos, e.message); }
  bool Skip() {
    LexError e;
    if (!lex_.SkipSpace(&e)) return LexFail(e);
    return true;
  }
  bool Expect(char c, std::string_view what = "") {
    if (!Skip()) return false;
    if (lex_.TryConsume(c)) return true;
    return Error(lex_.pos(), Cat("expected '", std::string(1, c), "'", what.empty() ? "" : " ",
                                 what, ", got ", Describe()));
  }
  // A short description of what is at the cursor, for messages.
  std::string Describe() {
    if (lex_.AtEnd()) return "end of input";
    size_t save = lex_.pos();
    std::string_view name = lex_.ReadName();
    lex_.set_pos(save);
    if (!name.empty()) return Cat("'", name.substr(0, 40), "'");
    return Cat("'", std::string(1, lex_.Peek()), "'");
  }

  // Numbers.
  bool ParseInt64(int64_t* out);
  bool ParseIntList(std::vector<int64_t>* out);  // {1,2,3}
  bool ParseBool(bool* out);
  bool ParseEnumWord(std::string_view* word);

  // Shapes.
  bool ParseShape(Shape* shape, int depth = 0);
  bool ParseLayout(Shape* shape);
  bool AtLayoutStart() const;
  bool LooksLikeShape();

  // Literals.
  bool ParseLiteral(const Shape& shape, Literal* literal, int depth);
  bool ParseArrayLevel(Literal* literal, const std::vector<int64_t>& dims, size_t level,
                       int64_t* index);
  bool ParseScalarInto(Literal* literal, int64_t index);
  bool ParseRealValue(PrimitiveType type, Literal* literal, int64_t index);
  bool ParseDouble(double* out, bool* is_nan_payload, uint64_t* payload, bool* negative);

  // Module structure.
  bool ParseHeader(Module* module);
  bool MaybeParseStackFrames(std::string* trailer);
  bool ParseComputation(Module* module, bool* is_entry);
  // A computation's "(p0: shape, ...) -> shape" when present: *params is its number of
  // parameters, -1 without a signature (the shapes are the instructions' to say).
  bool ParseSignature(int64_t* params);
  // ", key=value" attributes between the signature and the body, kept as written.
  bool ParseComputationAttributes(Computation* computation);
  bool ParseInstruction(Computation* computation, std::vector<PendingInstruction>* pending,
                        InstructionNames* names, Instruction** root, size_t* root_pos);
  // Adds each instruction's operands and control predecessors by name; *forward when any
  // names an instruction defined after it (the text then needs a cycle check and a sort).
  bool ResolveInstructionNames(const InstructionNames& names,
                               std::vector<PendingInstruction>& pending, bool* forward);
  // An error at an instruction that depends on itself, through operands or control edges.
  bool CheckAcyclic(const std::vector<PendingInstruction>& pending);
  // Parameters numbered 0..n-1, each once; *count is n.
  bool CheckParameterNumbers(const std::vector<PendingInstruction>& pending, std::string_view name,
                             size_t start, int64_t* count);
  bool ParseAttribute(Instruction* instruction, PendingCalls* calls, PendingInstruction* pending,
                      std::vector<std::string_view>* seen);
  bool ParseWindow(Window* window);
  bool ParseConvDims(ConvolutionDimensionNumbers* dnums);
  bool ParseSlice(std::vector<SliceDimension>* slice);
  bool ParsePadding(std::vector<PaddingDimension>* padding);
  bool ParseNameList(std::vector<NameRef>* names);  // {%a, %b} or a single name
  bool ResolveCalls(Module* module);

  Lexer lex_;
  std::string_view filename_;
  absl::Status status_;
  std::vector<PendingCalls> pending_calls_;
  // The computations parsed so far by name (Module::FindComputation is a linear search, and a
  // module has hundreds of computations, each named once and called about once).
  absl::flat_hash_map<std::string, Computation*> computations_by_name_;
};

// ---------------------------------------------------------------------------
// Numbers and small values.

bool Parser::ParseInt64(int64_t* out) {
  if (!Skip()) return false;
  size_t start = lex_.pos();
  bool negative = false;
  if (lex_.TryConsume('-'))
    negative = true;
  else
    lex_.TryConsume('+');
  if (!IsDigit(lex_.Peek())) {
    lex_.set_pos(start);
    return Error(start, Cat("expected an integer, got ", Describe()));
  }
  uint64_t value = 0;
  while (IsDigit(lex_.Peek())) {
    uint64_t digit = lex_.Peek() - '0';
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      return Error(start, "integer is too large");
    }
    value = value * 10 + digit;
    lex_.Advance();
  }
  uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (value > limit) return Error(start, "integer is too large");
  *out = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return true;
}

bool Parser::ParseIntList(std::vector<int64_t>* out) {
  out->clear();
  if (!Expect('{')) return false;
  if (!Skip()) return false;
  if (lex_.TryConsume('}')) return true;
  while (true) {
    int64_t v;
    if (!ParseInt64(&v)) return false;
    out->push_back(v);
    if (!Skip()) return false;
    if (lex_.TryConsume('}')) return true;
    if (!lex_.TryConsume(',')) {
      return Error(lex_.pos(), Cat("expected ',' or '}' in list, got ", Describe()));
    }
  }
}

bool Parser::ParseEnumWord(std::string_view* word) {
  if (!Skip()) return false;
  size_t start = lex_.pos();
  *word = lex_.ReadName();
  if (word->empty()) return Error(start, Cat("expected a name, got ", Describe()));
  return true;
}

bool Parser::ParseBool(bool* out) {
  if (!Skip()) return false;
  size_t start = lex_.pos();
  std::string_view w = lex_.ReadName();
  if (w == "true")
    *out = true;
  else if (w == "false")
    *out = false;
  else
    return Error(start, Cat("expected true or false, got ", Describe()));
  return true;
}

// ---------------------------------------------------------------------------
// Shapes.

bool Parser::AtLayoutStart() const {
  // A '{' right after a shape is a layout if it holds layout text; the body
  // of a computation ("-> f32[] {" then instructions) is not.
  std::string_view t = lex_.text();
  size_t p = lex_.pos();
  if (p >= t.size() || t[p] != '{') return false;
  ++p;
  while (p < t.size() && (t[p] == ' ' || t[p] == '\t')) ++p;
  if (p >= t.size()) return false;
  char c = t[p];
  return IsDigit(c) || c == '}' || c == ':';
}

bool Parser::ParseLayout(Shape* shape) {
  size_t start = lex_.pos();
  lex_.Advance();  // '{'
  Layout layout;
  if (!Skip()) return false;
  if (!lex_.TryConsume('}')) {
    if (lex_.Peek() != ':') {
      while (true) {
        int64_t v;
        if (!ParseInt64(&v)) return false;
        layout.minor_to_major.push_back(v);
        if (!Skip()) return false;
        if (lex_.TryConsume(',')) continue;
        break;
      }
    }
    if (lex_.TryConsume(':')) {
      size_t detail_start = lex_.pos();
      int depth = 0;
      std::string_view t = lex_.text();
      size_t p = detail_start;
      for (; p < t.size(); ++p) {
        char c = t[p];
        if (c == '(')
          ++depth;
        else if (c == ')') {
          if (--depth < 0) return Error(p, "unbalanced ')' in layout");
        } else if (c == '}' && depth == 0)
          break;
        else if (c == '{' || c == '\n')
          return Error(p, "unexpected character in layout");
      }
      if (p >= t.size()) return Error(start, "unterminated layout");
      size_t end = p;
      while (end > detail_start && (t[end - 1] == ' ' || t[end - 1] == '\t')) --end;
      layout.details = std::string(t.substr(detail_start, end - detail_start));
      lex_.set_pos(p);
    }
    if (!Expect('}', "to close the layout")) return false;
  }
  if (static_cast<int64_t>(layout.minor_to_major.size()) != shape->rank()) {
    return Error(start, Cat("layout has ", layout.minor_to_major.size(),
                            " dimensions but the shape has rank ", shape->rank()));
  }
  std::vector<bool> used(layout.minor_to_major.size(), false);
  for (int64_t d : layout.minor_to_major) {
    if (d < 0 || d >= shape->rank() || used[d]) {
      return Error(start, "layout is not a permutation of the dimensions");
    }
    used[d] = true;
  }
  shape->set_layout(std::move(layout));
  return true;
}

bool Parser::ParseShape(Shape* shape, int depth) {
  if (!Skip()) return false;
  size_t start = lex_.pos();
  if (depth > kMaxNesting) return Error(start, "shape nesting is too deep");
  if (lex_.TryConsume('(')) {
    std::vector<Shape> elements;
    if (!Skip()) return false;
    if (!lex_.TryConsume(')')) {
      while (true) {
        Shape element;
        if (!ParseShape(&element, depth + 1)) return false;
        elements.push_back(std::move(element));
        if (!Skip()) return false;
        if (lex_.TryConsume(')')) break;
        if (!lex_.TryConsume(',')) {
          return Error(lex_.pos(), Cat("expected ',' or ')' in tuple shape, got ", Describe()));
        }
      }
    }
    *shape = Shape::Tuple(std::move(elements));
    return true;
  }
  std::string_view type_name = lex_.ReadName();
  if (type_name.empty()) {
    return Error(start, Cat("expected a shape, got ", Describe()));
  }
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(type_name);
  if (!type.has_value() || *type == PrimitiveType::kTuple || *type == PrimitiveType::kInvalid) {
    return Error(start, Cat("unknown element type '", type_name, "'"));
  }
  if (lex_.Peek() != '[') {
    return Error(lex_.pos(), Cat("expected '[' after element type '", type_name, "'"));
  }
  lex_.Advance();
  if (*type == PrimitiveType::kToken || *type == PrimitiveType::kOpaque) {
    if (!Expect(']', "(token and opaque shapes have no dimensions)")) return false;
    if (*type == PrimitiveType::kToken) {
      *shape = Shape::Token();
    } else {
      *shape = Shape();
      shape->set_element_type(PrimitiveType::kOpaque);
    }
    return true;
  }
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  bool any_dynamic = false;
  if (!Skip()) return false;
  if (!lex_.TryConsume(']')) {
    while (true) {
      if (!Skip()) return false;
      size_t dim_pos = lex_.pos();
      if (lex_.TryConsume('?')) {
        dims.push_back(Shape::kUnboundedSize);
        dynamic.push_back(true);
        any_dynamic = true;
      } else {
        bool bounded = false;
        if (lex_.Peek() == '<' && lex_.PeekAt(1) == '=') {
          lex_.Advance(2);
          bounded = true;
          any_dynamic = true;
        }
        int64_t d;
        if (!ParseInt64(&d)) return false;
        if (d < 0) return Error(dim_pos, "negative dimension size");
        dims.push_back(d);
        dynamic.push_back(bounded);
      }
      if (!Skip()) return false;
      if (lex_.TryConsume(']')) break;
      if (!lex_.TryConsume(',')) {
        return Error(lex_.pos(), Cat("expected ',' or ']' in dimensions, got ", Describe()));
      }
    }
  }
  // Guard element-count arithmetic elsewhere against overflow.
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d == Shape::kUnboundedSize || d == 0) continue;
    if (count > kMaxElements / d) return Error(start, "shape has too many elements");
    count *= d;
  }
  *shape = Shape(*type, std::move(dims));
  if (any_dynamic) {
    for (size_t i = 0; i < dynamic.size(); ++i) {
      if (dynamic[i]) shape->set_dynamic_dimension(static_cast<int64_t>(i), true);
    }
  }
  if (AtLayoutStart()) return ParseLayout(shape);
  return true;
}

// True if the cursor is at a shape (a tuple or an element type followed by
// '['), as in the long form of operands.
bool Parser::LooksLikeShape() {
  char c = lex_.Peek();
  if (c == '(') return true;
  size_t save = lex_.pos();
  std::string_view word = lex_.ReadName();
  bool result = !word.empty() && lex_.Peek() == '[' && PrimitiveTypeFromName(word).has_value();
  lex_.set_pos(save);
  return result;
}

// ---------------------------------------------------------------------------
// Literals.

// Reads a number-like token: [+-]? then name characters, with '+'/'-' after
// an exponent letter, and a "(0x...)" NaN payload.
static std::string_view ReadNumberToken(Lexer& lex) {
  std::string_view t = lex.text();
  size_t start = lex.pos();
  size_t p = start;
  if (p < t.size() && (t[p] == '-' || t[p] == '+')) ++p;
  bool hex = p + 1 < t.size() && t[p] == '0' && (t[p + 1] == 'x' || t[p + 1] == 'X');
  while (p < t.size()) {
    char c = t[p];
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
        c == '_') {
      ++p;
    } else if ((c == '+' || c == '-') && p > start &&
               ((!hex && (t[p - 1] == 'e' || t[p - 1] == 'E')) ||
                (hex && (t[p - 1] == 'p' || t[p - 1] == 'P')))) {
      ++p;
    } else {
      break;
    }
  }
  // nan(0x...) payload
  std::string_view word = t.substr(start, p - start);
  if (p < t.size() && t[p] == '(' && (word == "nan" || word == "-nan" || word == "+nan")) {
    size_t close = t.find(')', p);
    if (close != std::string_view::npos && close - p < 40) p = close + 1;
  }
  lex.set_pos(p);
  return t.substr(start, p - start);
}

bool Parser::ParseDouble(double* out, bool* is_nan_payload, uint64_t* payload, bool* negative) {
  size_t start = lex_.pos();
  std::string_view tok = ReadNumberToken(lex_);
  *is_nan_payload = false;
  *negative = false;
  if (tok.empty()) return Error(start, Cat("expected a number, got ", Describe()));
  std::string_view body = tok;
  if (body[0] == '-' || body[0] == '+') {
    *negative = body[0] == '-';
    body.remove_prefix(1);
  }
  double value;
  if (body == "inf" || body == "infinity" || body == "Inf") {
    value = std::numeric_limits<double>::infinity();
  } else if (body == "nan" || body == "NaN") {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (body.substr(0, 4) == "nan(") {
    value = std::numeric_limits<double>::quiet_NaN();
    std::string_view inner = body.substr(4, body.size() - 5);
    if (inner.substr(0, 2) == "0x" || inner.substr(0, 2) == "0X") inner.remove_prefix(2);
    uint64_t bits = 0;
    auto [ptr, ec] = std::from_chars(inner.data(), inner.data() + inner.size(), bits, 16);
    if (ec != std::errc() || ptr != inner.data() + inner.size()) {
      return Error(start, Cat("invalid NaN payload '", tok, "'"));
    }
    *is_nan_payload = true;
    *payload = bits;
  } else if (body == "true" || body == "false") {
    value = body == "true" ? 1 : 0;
  } else if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    std::string_view hex = body.substr(2);
    auto [ptr, ec] =
        std::from_chars(hex.data(), hex.data() + hex.size(), value, std::chars_format::hex);
    if (ptr != hex.data() + hex.size() ||
        (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      return Error(start, Cat("invalid number '", tok, "'"));
    }
  } else {
    auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (ptr != body.data() + body.size() || body.empty()) {
      return Error(start, Cat("invalid number '", tok, "'"));
    }
    if (ec == std::errc::result_out_of_range) {
      // Overflow to infinity, underflow to zero.
      bool tiny = body.find_first_of("eE") != std::string_view::npos &&
                  body.find("e-") != std::string_view::npos;
      value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
    } else if (ec != std::errc()) {
      return Error(start, Cat("invalid number '", tok, "'"));
    }
  }
  *out = *negative ? -value : value;
  return true;
}

bool Parser::ParseRealValue(PrimitiveType type, Literal* literal, int64_t index) {
  if (!Skip()) return false;
  size_t start = lex_.pos();
  if (type == PrimitiveType::kPred) {
    std::string_view tok = ReadNumberToken(lex_);
    if (tok == "true" || tok == "1")
      literal->SetFromInt64(index, 1);
    else if (tok == "false" || tok == "0")
      literal->SetFromInt64(index, 0);
    else
      return Error(start, Cat("expected a pred value (true/false), got '", tok, "'"));
    return true;
  }
  if (IsIntegralType(type)) {
    std::string_view tok = ReadNumberToken(lex_);
    if (tok.empty()) return Error(start, Cat("expected an integer, got ", Describe()));
    std::string_view body = tok;
    bool negative = false;
    if (body[0] == '-' || body[0] == '+') {
      negative = body[0] == '-';
      body.remove_prefix(1);
    }
    int base = 10;
    if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
      body.remove_prefix(2);
      base = 16;
    }
    if (body == "true" || body == "false") {
      literal->SetFromInt64(index, body == "true" ? 1 : 0);
      return true;
    }
    uint64_t magnitude = 0;
    auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), magnitude, base);
    if (body.empty() || ptr != body.data() + body.size()) {
      return Error(start, Cat("invalid integer '", tok, "' for ", PrimitiveTypeName(type)));
    }
    if (ec != std::errc()) {
      return Error(start, Cat("integer '", tok, "' is out of range for ", PrimitiveTypeName(type)));
    }
    int bits = BitWidth(type);
    if (IsUnsignedIntegralType(type)) {
      uint64_t max = bits >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
      if ((negative && magnitude != 0) || magnitude > max) {
        return Error(start,
                     Cat("integer '", tok, "' is out of range for ", PrimitiveTypeName(type)));
      }
      literal->SetFromUint64(index, magnitude);
    } else {
      uint64_t max_pos = (uint64_t{1} << (bits - 1)) - 1;
      uint64_t max_neg = uint64_t{1} << (bits - 1);
      if ((!negative && magnitude > max_pos) || (negative && magnitude > max_neg)) {
        return Error(start,
                     Cat("integer '", tok, "' is out of range for ", PrimitiveTypeName(type)));
      }
      int64_t v = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
      literal->SetFromInt64(index, v);
    }
    return true;
  }
  // Floating point.
  double value;
  bool has_payload, negative;
  uint64_t payload = 0;
  if (!ParseDouble(&value, &has_payload, &payload, &negative)) return false;
  if (has_payload) {
    std::optional<FloatFormat> format = FloatFormatOf(type);
    if (format.has_value() && format->nan == FloatFormat::NanEncoding::kIeee) {
      int total_bits = BitWidth(type);
      uint64_t mantissa_mask = (uint64_t{1} << format->mantissa_bits) - 1;
      uint64_t exponent = ((uint64_t{1} << format->exponent_bits) - 1) << format->mantissa_bits;
      uint64_t m = payload & mantissa_mask;
      if (m == 0) m = uint64_t{1} << (format->mantissa_bits - 1);
      uint64_t bits = exponent | m;
      if (negative && format->has_sign) bits |= uint64_t{1} << (total_bits - 1);
      literal->SetBits(index, bits);
      return true;
    }
  }
  if (std::isnan(value)) {
    // Keep the sign of "-nan".
    value = negative ? -std::numeric_limits<double>::quiet_NaN()
                     : std::numeric_limits<double>::quiet_NaN();
  }
  literal->SetFromDouble(index, value);
  return true;
}

bool Parser::ParseScalarInto(Literal* literal, int64_t index) {
  PrimitiveType type = literal->shape().element_type();
  if (!Skip()) return false;
  if (IsComplexType(type)) {
    PrimitiveType part = type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    double re = 0, im = 0;
    bool has_payload, negative;
    uint64_t payload;
    if (lex_.TryConsume('(')) {
      if (!Skip()) return false;
      if (!ParseDouble(&re, &has_payload, &payload, &negative)) return false;
      if (!Expect(',', "in complex value")) return false;
      if (!Skip()) return false;
      if (!ParseDouble(&im, &has_payload, &payload, &negative)) return false;
      if (!Expect(')', "to close the complex value")) return false;
    } else {
      if (!ParseDouble(&re, &has_payload, &payload, &negative)) return false;
    }
    (void)part;
    literal->SetFromComplex(index, {re, im});
    return true;
  }
  return ParseRealValue(type, literal, index);
}

bool Parser::ParseArrayLevel(Literal* literal, const std::vector<int64_t>& dims, size_t level,
                             int64_t* index) {
  if (!Expect('{', "in array constant")) return false;
  int64_t n = dims[level];
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0 && !Expect(',', "between array elements")) return false;
    if (level + 1 == dims.size()) {
      if (!ParseScalarInto(literal, (*index)++)) return false;
    } else {
      if (!ParseArrayLevel(literal, dims, level + 1, index)) return false;
    }
  }
  if (!Skip()) return false;
  if (!lex_.TryConsume('}')) {
    if (lex_.Peek() == ',') {
      return Error(lex_.pos(), Cat("too many elements in array constant (dimension ", level,
                                   " has size ", n, ")"));
    }
    return Error(lex_.pos(), Cat("expected '}' in array constant, got ", Describe()));
  }
  return true;
}

bool Parser::ParseLiteral(const Shape& shape, Literal* literal, int depth) {
  if (!Skip()) return false;
  size_t start = lex_.pos();
  if (depth > kMaxNesting) return Error(start, "constant nesting is too deep");
  // Elided values: {...}
  {
    std::string_view rest = lex_.text().substr(lex_.pos());
    if (rest.substr(0, 5) == "{...}") {
      lex_.Advance(5);
      *literal = Literal::Elided(shape);
      return true;
    }
  }
  if (depth == 0 && LiteralBytes(shape) > kMaxConstantBytes) {
    return Error(start, "constant is too large");
  }
  if (shape.IsTuple()) {
    if (!Expect('(', "to start a tuple constant")) return false;
    Literal result(shape);
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0 && !Expect(',', "between tuple constant elements")) return false;
      if (!ParseLiteral(shape.tuple_shapes(i), &result.mutable_tuple_elements()[i], depth + 1)) {
        return false;
      }
    }
    if (!Expect(')', "to close the tuple constant")) return false;
    *literal = std::move(result);
    return true;
  }
  if (!shape.IsArray()) return Error(start, "constants must have an array or tuple shape");
  for (int64_t d : shape.dimensions()) {
    if (d == Shape::kUnboundedSize) return Error(start, "constant with an unbounded dimension");
  }
  Literal result(shape);
  if (shape.rank() == 0) {
    if (!ParseScalarInto(&result, 0)) return false;
  } else {
    int64_t index = 0;
    if (!ParseArrayLevel(&result, shape.dimensions(), 0, &index)) return false;
  }
  *literal = std::move(result);
  return true;
}

// ---------------------------------------------------------------------------
// Structured attributes.

bool Parser::ParseWindow(Window* window) {
  if (!Expect('{', "to start the window")) return false;
  window->dimensions.clear();
  int64_t rank = -1;
  std::vector<std::string_view> seen;
  while (true) {
    if (!Skip()) return false;
    if (lex_.TryConsume('}')) break;
    size_t key_pos = lex_.pos();
    std::string_view key = lex_.ReadName();
    if (key.empty()) return Error(key_pos, Cat("expected a window field, got ", Describe()));
    for (std::string_view s : seen) {
      if (s == key) return Error(key_pos, Cat("duplicate window field '", key, "'"));
    }
    seen.push_back(key);
    if (!Expect('=', "after window field")) return false;
    if (!Skip()) return false;
    bool is_pad = key == "pad";
    if (!is_pad && key != "size" && key != "stride" && key != "lhs_dilate" && key != "rhs_dilate" &&
        key != "rhs_reversal") {
      return Error(key_pos, Cat("unknown window field '", key, "'"));
    }
    std::vector<std::pair<int64_t, int64_t>> values;
    while (true) {
      int64_t a, b = 0;
      if (!ParseInt64(&a)) return false;
      if (is_pad) {
        if (!lex_.TryConsume('_')) return Error(lex_.pos(), "expected '_' in window padding");
        if (!ParseInt64(&b)) return false;
      }
      values.push_back({a, b});
      if (lex_.Peek() == 'x') {
        lex_.Advance();
        continue;
      }
      break;
    }
    if (rank < 0) {
      rank = static_cast<int64_t>(values.size());
      window->dimensions.resize(rank);
    } else if (rank != static_cast<int64_t>(values.size())) {
      return Error(key_pos, Cat("window field '", key, "' has ", values.size(),
                                " dimensions, expected ", rank));
    }
    for (int64_t i = 0; i < rank; ++i) {
      WindowDimension& d = window->dimensions[i];
      if (key == "size")
        d.size = values[i].first;
      else if (key == "stride")
        d.stride = values[i].first;
      else if (key == "pad") {
        d.padding_low = values[i].first;
        d.padding_high = values[i].second;
      } else if (key == "lhs_dilate")
        d.base_dilation = values[i].first;
      else if (key == "rhs_dilate")
        d.window_dilation = values[i].first;
      else if (key == "rhs_reversal") {
        if (values[i].first != 0 && values[i].first != 1) {
          return Error(key_pos, "rhs_reversal values must be 0 or 1");
        }
        d.window_reversal = values[i].first == 1;
      }
    }
  }
  return true;
}

// "b01f_01io->b01f"
bool Parser::ParseConvDims(ConvolutionDimensionNumbers* dnums) {
  if (!Skip()) return false;
  size_t start = lex_.pos();
  std::string_view t = lex_.text();
  size_t p = start;
  auto read_part = [&](std::string_view* part) {
    size_t s = p;
    while (p < t.size() && ((t[p] >= 'a' && t[p] <= 'z') || IsDigit(t[p]))) ++p;
    *part = t.substr(s, p - s);
  };
  std::string_view lhs, rhs, out;
  read_part(&lhs);
  if (p >= t.size() || t[p] != '_') return Error(p, "expected '_' in dim_labels");
  ++p;
  read_part(&rhs);
  if (t.substr(p, 2) != "->") return Error(p, "expected '->' in dim_labels");
  p += 2;
  read_part(&out);
  lex_.set_pos(p);
  if (lhs.size() < 2 || lhs.size() != rhs.size() || lhs.size() != out.size()) {
    return Error(start, "dim_labels parts must have the same rank, at least 2");
  }
  size_t spatial = lhs.size() - 2;
  if (spatial > 10) return Error(start, "too many spatial dimensions in dim_labels");
  auto decode = [&](std::string_view part, char first, char second, int64_t* a, int64_t* b,
                    std::vector<int64_t>* sp) -> bool {
    *a = *b = -1;
    sp->assign(spatial, -1);
    for (size_t i = 0; i < part.size(); ++i) {
      char c = part[i];
      int64_t pos = static_cast<int64_t>(i);
      if (c == first && *a < 0)
        *a = pos;
      else if (c == second && *b < 0)
        *b = pos;
      else if (IsDigit(c) && static_cast<size_t>(c - '0') < spatial && (*sp)[c - '0'] < 0)
        (*sp)[c - '0'] = pos;
      else
        return Error(start, Cat("invalid dim_labels part '", part, "'"));
    }
    return true;
  };
  if (!decode(lhs, 'b', 'f', &dnums->input_batch_dimension, &dnums->input_feature_dimension,
              &dnums->input_spatial_dimensions))
    return false;
  if (!decode(rhs, 'i', 'o', &dnums->kernel_input_feature_dimension,
              &dnums->kernel_output_feature_dimension, &dnums->kernel_spatial_dimensions))
    return false;
  if (!decode(out, 'b', 'f', &dnums->output_batch_dimension, &dnums->output_feature_dimension,
              &dnums->output_spatial_dimensions))
    return false;
  return true;
}

bool Parser::ParseSlice(std::vector<SliceDimension>* slice) {
  slice->clear();
  if (!Expect('{', "to start the slice")) return false;
  if (!Skip()) return false;
  if (lex_.TryConsume('}')) return true;
  while (true) {
    if (!Expect('[', "in slice")) return false;
    SliceDimension d;
    if (!ParseInt64(&d.start)) return false;
    if (!Expect(':', "in slice")) return false;
    if (!ParseInt64(&d.limit)) return false;
    if (!Skip()) return false;
    if (lex_.TryConsume(':')) {
      if (!ParseInt64(&d.stride)) return false;
    }
    if (!Expect(']', "in slice")) return false;
    slice->push_back(d);
    if (!Skip()) return false;
    if (lex_.TryConsume('}')) return true;
    if (!lex_.TryConsume(','))
      return Error(lex_.pos(), Cat("expected ',' or '}' in slice, got ", Describe()));
  }
}

// "0_0x1_1_0"
bool Parser::ParsePadding(std::vector<PaddingDimension>* padding) {
  padding->clear();
  if (!Skip()) return false;
  while (true) {
    PaddingDimension d;
    if (!ParseInt64(&d.low)) return false;
    if (!lex_.TryConsume('_')) return Error(lex_.pos(), "expected '_' in padding");
    if (!ParseInt64(&d.high)) return false;
    if (lex_.TryConsume('_')) {
      if (!ParseInt64(&d.interior)) return false;
    }
    padding->push_back(d);
    if (lex_.Peek() == 'x') {
      lex_.Advance();
      continue;
    }
    return true;
  }
}

bool Parser::ParseNameList(std::vector<NameRef>* names) {
  names->clear();
  if (!Skip()) return false;
  if (lex_.TryConsume('{')) {
    if (!Skip()) return false;
    if (lex_.TryConsume('}')) return true;
    while (true) {
      if (!Skip()) return false;
      size_t pos = lex_.pos();
      std::string_view name = lex_.ReadNameWithPercent();
      if (name.empty()) return Error(pos, Cat("expected a name, got ", Describe()));
      names->push_back({name, pos});
      if (!Skip()) return false;
      if (lex_.TryConsume('}')) return true;
      if (!lex_.TryConsume(','))
        return Error(lex_.pos(), Cat("expected ',' or '}', got ", Describe()));
    }
  }
  size_t pos = lex_.pos();
  std::string_view name = lex_.ReadNameWithPercent();
  if (name.empty()) return Error(pos, Cat("expected a name, got ", Describe()));
  names->push_back({name, pos});
  return true;
}

// ---------------------------------------------------------------------------
// Instruction attributes.

bool Parser::ParseAttribute(Instruction* instruction, PendingCalls* calls,
                            PendingInstruction* pending, std::vector<std::string_view>* seen) {
  if (!Skip()) return false;
  size_t key_pos = lex_.pos();
  std::string_view key = lex_.ReadName();
  if (key.empty()) return Error(key_pos, Cat("expected an attribute name, got ", Describe()));
  if (!Skip()) return false;
  if (!lex_.TryConsume('=')) {
    return Error(lex_.pos(), Cat("expected '=' after attribute '", key, "', got ", Describe()));
  }
  if (!Skip()) return false;
  const Opcode op = instruction->opcode();
  InstructionAttributes& a = instruction->mutable_attrs();
  auto typed = [&]() -> bool {
    for (std::string_view s : *seen) {
      if (s == key) return Error(key_pos, Cat("duplicate attribute '", key, "'"));
    }
    seen->push_back(key);
    return true;
  };
  auto enum_value = [&](auto from_name, auto* out, std::string_view what) -> bool {
    std::string_view word;
    size_t pos = lex_.pos();
    if (!ParseEnumWord(&word)) return false;
    auto v = from_name(word);
    if (!v.has_value()) return Error(pos, Cat("unknown ", what, " '", word, "'"));
    *out = *v;
    return true;
  };
  auto gather = [&]() -> GatherDimensionNumbers& {
    if (!a.gather_dimension_numbers.has_value()) a.gather_dimension_numbers.emplace();
    return *a.gather_dimension_numbers;
  };
  auto scatter = [&]() -> ScatterDimensionNumbers& {
    if (!a.scatter_dimension_numbers.has_value()) a.scatter_dimension_numbers.emplace();
    return *a.scatter_dimension_numbers;
  };
  auto dot = [&]() -> DotDimensionNumbers& {
    if (!a.dot_dimension_numbers.has_value()) a.dot_dimension_numbers.emplace();
    return *a.dot_dimension_numbers;
  };
  auto ragged = [&]() -> RaggedDotDimensionNumbers& {
    if (!a.ragged_dot_dimension_numbers.has_value()) a.ragged_dot_dimension_numbers.emplace();
    return *a.ragged_dot_dimension_numbers;
  };

  // Called computations and control edges (any opcode where XLA allows them).
  if (key == "to_apply") return typed() && ParseNameList(&calls->to_apply);
  if (key == "calls") return typed() && ParseNameList(&calls->calls);
  if (key == "control-predecessors")
    return typed() && ParseNameList(&pending->control_predecessors);
  if (op == Opcode::kWhile && key == "condition")
    return typed() && ParseNameList(&calls->condition);
  if (op == Opcode::kWhile && key == "body") return typed() && ParseNameList(&calls->body);
  if (op == Opcode::kConditional) {
    if (key == "branch_computations") return typed() && ParseNameList(&calls->branches);
    if (key == "true_computation") return typed() && ParseNameList(&calls->true_c);
    if (key == "false_computation") return typed() && ParseNameList(&calls->false_c);
  }
  if (op == Opcode::kSelectAndScatter) {
    if (key == "select") return typed() && ParseNameList(&calls->select);
    if (key == "scatter") return typed() && ParseNameList(&calls->scatter);
  }
  if (op == Opcode::kCustomCall && key == "called_computations") {
    return typed() && ParseNameList(&calls->called);
  }

  bool handled = true;
  bool ok = true;
  if (key == "dimensions" && HasDimensionsAttr(op)) {
    ok = typed() && ParseIntList(&a.dimensions);
    a.has_dimensions = !RequiresDimensionsAttribute(op);
  } else if (key == "slice" && op == Opcode::kSlice) {
    ok = typed() && ParseSlice(&a.slice);
  } else if (key == "dynamic_slice_sizes" && op == Opcode::kDynamicSlice) {
    ok = typed() && ParseIntList(&a.dynamic_slice_sizes);
  } else if (key == "padding" && op == Opcode::kPad) {
    ok = typed() && ParsePadding(&a.padding);
  } else if (key == "window" && HasWindowAttr(op)) {
    Window w;
    ok = typed() && ParseWindow(&w);
    a.window = std::move(w);
  } else if (key == "dim_labels" && op == Opcode::kConvolution) {
    ConvolutionDimensionNumbers d;
    ok = typed() && ParseConvDims(&d);
    a.convolution_dimension_numbers = std::move(d);
  } else if (key == "feature_group_count" && op == Opcode::kConvolution) {
    ok = typed() && ParseInt64(&a.feature_group_count);
  } else if (key == "batch_group_count" && op == Opcode::kConvolution) {
    ok = typed() && ParseInt64(&a.batch_group_count);
  } else if (IsDotLike(op) && key == "lhs_batch_dims") {
    ok = typed() && ParseIntList(&dot().lhs_batch_dimensions);
  } else if (IsDotLike(op) && key == "rhs_batch_dims") {
    ok = typed() && ParseIntList(&dot().rhs_batch_dimensions);
  } else if (IsDotLike(op) && key == "lhs_contracting_dims") {
    ok = typed() && ParseIntList(&dot().lhs_contracting_dimensions);
  } else if (IsDotLike(op) && key == "rhs_contracting_dims") {
    ok = typed() && ParseIntList(&dot().rhs_contracting_dimensions);
  } else if (op == Opcode::kRaggedDot && key == "lhs_ragged_dims") {
    ok = typed() && ParseIntList(&ragged().lhs_ragged_dimensions);
  } else if (op == Opcode::kRaggedDot && key == "rhs_group_dims") {
    ok = typed() && ParseIntList(&ragged().rhs_group_dimensions);
  } else if (key == "operand_precision" && (IsDotLike(op) || op == Opcode::kConvolution)) {
    ok = typed() && Expect('{', "to start operand_precision");
    a.operand_precision.clear();
    if (ok && !(Skip() && lex_.TryConsume('}'))) {
      while (ok) {
        std::string_view word;
        size_t pos = lex_.pos();
        if (!ParseEnumWord(&word)) return false;
        auto p =
            PrecisionFromName(absl::AsciiStrToLower(absl::string_view(word.data(), word.size())));
        if (!p.has_value()) return Error(pos, Cat("unknown precision '", word, "'"));
        a.operand_precision.push_back(*p);
        if (!Skip()) return false;
        if (lex_.TryConsume('}')) break;
        if (!lex_.TryConsume(','))
          return Error(lex_.pos(), "expected ',' or '}' in operand_precision");
      }
    }
  } else if (op == Opcode::kGather && key == "offset_dims") {
    ok = typed() && ParseIntList(&gather().offset_dims);
  } else if (op == Opcode::kGather && key == "collapsed_slice_dims") {
    ok = typed() && ParseIntList(&gather().collapsed_slice_dims);
  } else if (op == Opcode::kGather && key == "start_index_map") {
    ok = typed() && ParseIntList(&gather().start_index_map);
  } else if (op == Opcode::kGather && key == "operand_batching_dims") {
    ok = typed() && ParseIntList(&gather().operand_batching_dims);
  } else if (op == Opcode::kGather && key == "start_indices_batching_dims") {
    ok = typed() && ParseIntList(&gather().start_indices_batching_dims);
  } else if (op == Opcode::kGather && key == "index_vector_dim") {
    ok = typed() && ParseInt64(&gather().index_vector_dim);
  } else if (op == Opcode::kGather && key == "slice_sizes") {
    ok = typed() && ParseIntList(&a.gather_slice_sizes);
  } else if (op == Opcode::kScatter && key == "update_window_dims") {
    ok = typed() && ParseIntList(&scatter().update_window_dims);
  } else if (op == Opcode::kScatter && key == "inserted_window_dims") {
    ok = typed() && ParseIntList(&scatter().inserted_window_dims);
  } else if (op == Opcode::kScatter && key == "scatter_dims_to_operand_dims") {
    ok = typed() && ParseIntList(&scatter().scatter_dims_to_operand_dims);
  } else if (op == Opcode::kScatter && key == "input_batching_dims") {
    ok = typed() && ParseIntList(&scatter().input_batching_dims);
  } else if (op == Opcode::kScatter && key == "scatter_indices_batching_dims") {
    ok = typed() && ParseIntList(&scatter().scatter_indices_batching_dims);
  } else if (op == Opcode::kScatter && key == "index_vector_dim") {
    ok = typed() && ParseInt64(&scatter().index_vector_dim);
  } else if ((op == Opcode::kGather || op == Opcode::kScatter) && key == "indices_are_sorted") {
    ok = typed() && ParseBool(&a.indices_are_sorted);
  } else if (op == Opcode::kScatter && key == "unique_indices") {
    ok = typed() && ParseBool(&a.unique_indices);
  } else if (op == Opcode::kCompare && key == "direction") {
    ok = typed() &&
         enum_value(ComparisonDirectionFromName, &a.comparison_direction, "comparison direction");
  } else if (op == Opcode::kCompare && key == "type") {
    ok = typed() && enum_value(ComparisonTypeFromName, &a.comparison_type, "comparison type");
    if (ok && a.comparison_type == ComparisonType::kUnset) {
      return Error(key_pos, "invalid comparison type");
    }
  } else if (op == Opcode::kFusion && key == "kind") {
    ok = typed() && enum_value(FusionKindFromName, &a.fusion_kind, "fusion kind");
  } else if (op == Opcode::kCustomCall && key == "custom_call_target") {
    if (!typed()) return false;
    if (lex_.Peek() != '"') return Error(lex_.pos(), "expected a quoted custom_call_target");
    std::string_view contents;
    LexError e;
    if (!lex_.ReadQuoted(&contents, &e)) return LexFail(e);
    std::string unescaped;
    if (!absl::CUnescape(absl::string_view(contents.data(), contents.size()), &unescaped))
      return Error(key_pos, "invalid escape in custom_call_target");
    a.custom_call_target = std::move(unescaped);
  } else if (op == Opcode::kRng && key == "distribution") {
    ok = typed() && enum_value(RandomDistributionFromName, &a.rng_distribution, "distribution");
  } else if (op == Opcode::kRngBitGenerator && key == "algorithm") {
    ok = typed() && enum_value(RandomAlgorithmFromName, &a.rng_algorithm, "algorithm");
  } else if (op == Opcode::kReducePrecision && key == "exponent_bits") {
    ok = typed() && ParseInt64(&a.exponent_bits);
  } else if (op == Opcode::kReducePrecision && key == "mantissa_bits") {
    ok = typed() && ParseInt64(&a.mantissa_bits);
  } else if (op == Opcode::kFft && key == "fft_type") {
    ok = typed() && enum_value(FftTypeFromName, &a.fft_type, "fft_type");
  } else if (op == Opcode::kFft && key == "fft_length") {
    ok = typed() && ParseIntList(&a.fft_length);
  } else if (op == Opcode::kTriangularSolve && key == "left_side") {
    ok = typed() && ParseBool(&a.left_side);
  } else if ((op == Opcode::kTriangularSolve || op == Opcode::kCholesky) && key == "lower") {
    ok = typed() && ParseBool(&a.lower);
  } else if (op == Opcode::kTriangularSolve && key == "unit_diagonal") {
    ok = typed() && ParseBool(&a.unit_diagonal);
  } else if (op == Opcode::kTriangularSolve && key == "transpose_a") {
    ok = typed() && enum_value(TriangularSolveTransposeFromName, &a.transpose_a, "transpose_a");
  } else if ((op == Opcode::kBatchNormGrad || op == Opcode::kBatchNormInference ||
              op == Opcode::kBatchNormTraining) &&
             key == "epsilon") {
    if (!typed() || !Skip()) return false;
    double v;
    bool payload, negative;
    uint64_t bits;
    if (!ParseDouble(&v, &payload, &bits, &negative)) return false;
    a.epsilon = static_cast<float>(v);
  } else if ((op == Opcode::kBatchNormGrad || op == Opcode::kBatchNormInference ||
              op == Opcode::kBatchNormTraining) &&
             key == "feature_index") {
    ok = typed() && ParseInt64(&a.feature_index);
  } else if (op == Opcode::kSort && key == "is_stable") {
    ok = typed() && ParseBool(&a.is_stable);
  } else if (op == Opcode::kTopK && key == "k") {
    ok = typed() && ParseInt64(&a.k);
  } else if (op == Opcode::kTopK && key == "largest") {
    ok = typed() && ParseBool(&a.largest);
  } else if (op == Opcode::kGetTupleElement && key == "index") {
    ok = typed() && ParseInt64(&a.tuple_index);
    if (ok && a.tuple_index < 0) return Error(key_pos, "negative tuple index");
  } else if (op == Opcode::kIota && key == "iota_dimension") {
    ok = typed() && ParseInt64(&a.iota_dimension);
  } else {
    handled = false;
  }
  if (handled) return ok;

  // Everything else verbatim.
  std::string_view value;
  LexError e;
  if (!lex_.ScanRawValue(/*stop_at_space=*/false, &value, &e)) return LexFail(e);
  a.raw.push_back(RawAttribute{std::string(key), std::string(value)});
  return true;
}

// ---------------------------------------------------------------------------
// Instructions and computations.

bool Parser::ParseInstruction(Computation* computation, std::vector<PendingInstruction>* pending,
                              InstructionNames* names, Instruction** root, size_t* root_pos) {
  if (!Skip()) return false;
  size_t start = lex_.pos();
  bool is_root = false;
  if (lex_.TryConsumeKeyword("ROOT")) {
    size_t save = lex_.pos();
    if (!Skip()) return false;
    if (lex_.Peek() == '=') {
      lex_.set_pos(save - 4);  // an instruction named ROOT
    } else {
      is_root = true;
    }
  }
  if (!Skip()) return false;
  size_t name_pos = lex_.pos();
  std::string_view name = lex_.ReadNameWithPercent();
  if (name.empty()) {
    return Error(name_pos, Cat("expected an instruction name, got ", Describe()));
  }
  if (!Skip()) return false;
  if (!lex_.TryConsume('=')) {
    return Error(lex_.pos(),
                 Cat("expected '=' after instruction name '", name, "', got ", Describe()));
  }
  Shape shape;
  if (!ParseShape(&shape)) return false;
  if (!Skip()) return false;
  size_t opcode_pos = lex_.pos();
  std::string_view opcode_name = lex_.ReadName();
  if (opcode_name.empty()) {
    return Error(opcode_pos, Cat("expected an opcode, got ", Describe()));
  }
  std::optional<Opcode> opcode = OpcodeFromName(opcode_name);
  if (!opcode.has_value()) {
    return Error(opcode_pos, Cat("unknown opcode '", opcode_name, "'"));
  }
  auto instruction = std::make_unique<Instruction>(*opcode, shape, std::string(name));
  Instruction* inst = instruction.get();
  PendingInstruction p{inst, name_pos, {}, {}};
  if (!Expect('(', Cat("after opcode '", opcode_name, "'"))) return false;
  if (!Skip()) return false;

  if (*opcode == Opcode::kParameter) {
    int64_t number;
    size_t pos = lex_.pos();
    if (!ParseInt64(&number)) return false;
    if (number < 0 || number >= kMaxParameterNumber) {
      return Error(pos, "parameter number out of range");
    }
    inst->mutable_attrs().parameter_number = number;
    if (!Expect(')', "after parameter number")) return false;
  } else if (*opcode == Opcode::kConstant) {
    // Old XLA wrote the shape again inside: constant(f32[2] {1, 2}).
    if (LooksLikeShape() && lex_.Peek() != '(') {
      Shape ignored;
      if (!ParseShape(&ignored)) return false;
    }
    Literal literal;
    if (!ParseLiteral(shape, &literal, 0)) return false;
    inst->mutable_attrs().literal = std::make_shared<const Literal>(std::move(literal));
    if (!Expect(')', "to close the constant")) return false;
  } else if (!lex_.TryConsume(')')) {
    while (true) {
      if (!Skip()) return false;
      if (LooksLikeShape()) {
        Shape ignored;
        if (!ParseShape(&ignored)) return false;
        if (!Skip()) return false;
      }
      size_t pos = lex_.pos();
      std::string_view operand = lex_.ReadNameWithPercent();
      if (operand.empty()) return Error(pos, Cat("expected an operand name, got ", Describe()));
      p.operands.push_back({operand, pos});
      if (!Skip()) return false;
      if (lex_.TryConsume(')')) break;
      if (!lex_.TryConsume(',')) {
        return Error(lex_.pos(), Cat("expected ',' or ')' after operand, got ", Describe()));
      }
    }
  }
  std::optional<int> arity = OpcodeArity(*opcode);
  if (arity.has_value() && *opcode != Opcode::kParameter && *opcode != Opcode::kConstant &&
      static_cast<int64_t>(p.operands.size()) != *arity) {
    return Error(opcode_pos, Cat("'", opcode_name, "' expects ", *arity, " operand",
                                 *arity == 1 ? "" : "s", ", got ", p.operands.size()));
  }

  PendingCalls calls;
  calls.instruction = inst;
  calls.pos = opcode_pos;
  std::vector<std::string_view> seen;
  while (true) {
    size_t save = lex_.pos();
    if (!Skip()) return false;
    if (!lex_.TryConsume(',')) {
      lex_.set_pos(save);
      break;
    }
    if (!ParseAttribute(inst, &calls, &p, &seen)) return false;
  }
  // Typed attributes that XLA requires.
  const InstructionAttributes& a = inst->attrs();
  if (*opcode == Opcode::kGetTupleElement) {
    bool has_index = false;
    for (std::string_view s : seen) has_index |= s == "index";
    if (!has_index) return Error(opcode_pos, "get-tuple-element requires 'index='");
  }
  if (*opcode == Opcode::kCompare) {
    bool has = false;
    for (std::string_view s : seen) has |= s == "direction";
    if (!has) return Error(opcode_pos, "compare requires 'direction='");
  }
  (void)a;

  if (names->contains(name)) {
    return Error(name_pos, Cat("duplicate instruction name '", name, "'"));
  }
  if (is_root) {
    if (*root != nullptr) return Error(start, "more than one ROOT instruction");
    *root = inst;
    *root_pos = start;
  }
  (*names)[name] = {inst, pending->size()};
  if (!calls.to_apply.empty() || !calls.calls.empty() || !calls.condition.empty() ||
      !calls.body.empty() || !calls.branches.empty() || !calls.true_c.empty() ||
      !calls.false_c.empty() || !calls.select.empty() || !calls.scatter.empty() ||
      !calls.called.empty()) {
    pending_calls_.push_back(std::move(calls));
  } else {
    // Still record it when the opcode needs a callee, for the error message.
    switch (*opcode) {
      case Opcode::kReduce:
      case Opcode::kReduceWindow:
      case Opcode::kMap:
      case Opcode::kSort:
      case Opcode::kScatter:
      case Opcode::kSelectAndScatter:
      case Opcode::kWhile:
      case Opcode::kConditional:
      case Opcode::kFusion:
      case Opcode::kCall:
      case Opcode::kAllReduce:
      case Opcode::kAllReduceStart:
      case Opcode::kReduceScatter:
      case Opcode::kAsyncStart:
        pending_calls_.push_back(std::move(calls));
        break;
      default:
        break;
    }
  }
  computation->AddInstruction(std::move(instruction));
  pending->push_back(std::move(p));
  return true;
}

bool Parser::ParseComputation(Module* module, bool* is_entry) {
  if (!Skip()) return false;
  size_t start = lex_.pos();
  *is_entry = false;
  if (lex_.TryConsumeKeyword("ENTRY")) {
    size_t save = lex_.pos();
    if (!Skip()) return false;
    if (lex_.Peek() == '{' || lex_.Peek() == '(') {
      lex_.set_pos(save - 5);  // a computation named ENTRY
    } else {
      *is_entry = true;
    }
  }
  if (!Skip()) return false;
  size_t name_pos = lex_.pos();
  std::string_view name = lex_.ReadNameWithPercent();
  if (name.empty()) return Error(name_pos, Cat("expected a computation, got ", Describe()));
  if (computations_by_name_.contains(absl::string_view(name.data(), name.size()))) {
    return Error(name_pos, Cat("duplicate computation name '", name, "'"));
  }
  if (!Skip()) return false;
  int64_t signature_params = -1;
  if (!ParseSignature(&signature_params)) return false;
  auto owned = std::make_unique<Computation>(std::string(name));
  Computation* computation = module->AddComputation(std::move(owned));
  computations_by_name_[computation->name()] = computation;
  if (!ParseComputationAttributes(computation)) return false;
  if (!Expect('{', "to open the computation body")) return false;

  std::vector<PendingInstruction> pending;
  InstructionNames names;
  Instruction* root = nullptr;
  size_t root_pos = 0;
  while (true) {
    if (!Skip()) return false;
    if (lex_.AtEnd()) return Error(start, Cat("computation '", name, "' is not closed with '}'"));
    if (lex_.TryConsume('}')) break;
    if (!ParseInstruction(computation, &pending, &names, &root, &root_pos)) return false;
  }
  if (pending.empty()) return Error(start, Cat("computation '", name, "' has no instructions"));

  bool forward = false;
  if (!ResolveInstructionNames(names, pending, &forward)) return false;
  // Only a text that names an instruction before defining it can hold a cycle.
  if (forward) {
    if (!CheckAcyclic(pending)) return false;
    computation->SortInstructionsTopologically();
  }
  int64_t param_count = 0;
  if (!CheckParameterNumbers(pending, name, start, &param_count)) return false;
  if (signature_params >= 0 && signature_params != param_count) {
    return Error(name_pos, Cat("signature of '", name, "' lists ", signature_params,
                               " parameters but the body has ", param_count));
  }
  computation->set_root_instruction(root != nullptr ? root : pending.back().instruction);
  if (*is_entry) {
    if (module->entry_computation() != nullptr)
      return Error(start, "more than one ENTRY computation");
    module->set_entry_computation(computation);
  }
  return true;
}

bool Parser::ParseSignature(int64_t* params) {
  *params = -1;
  if (!lex_.TryConsume('(')) return true;
  *params = 0;
  if (!Skip()) return false;
  if (!lex_.TryConsume(')')) {
    while (true) {
      if (!Skip()) return false;
      size_t pos = lex_.pos();
      std::string_view param = lex_.ReadNameWithPercent();
      if (param.empty()) return Error(pos, Cat("expected a parameter name, got ", Describe()));
      if (!Expect(':', "after parameter name")) return false;
      Shape ignored;
      if (!ParseShape(&ignored)) return false;
      ++*params;
      if (!Skip()) return false;
      if (lex_.TryConsume(')')) break;
      if (!lex_.TryConsume(',')) {
        return Error(lex_.pos(), Cat("expected ',' or ')' in signature, got ", Describe()));
      }
    }
  }
  if (!Skip()) return false;
  if (lex_.Peek() != '-' || lex_.PeekAt(1) != '>') {
    return Error(lex_.pos(), Cat("expected '->' after the parameter list, got ", Describe()));
  }
  lex_.Advance(2);
  Shape ignored;
  return ParseShape(&ignored);
}

bool Parser::ParseComputationAttributes(Computation* computation) {
  // ", execution_thread="x"" and the like.
  while (true) {
    if (!Skip()) return false;
    if (!lex_.TryConsume(',')) return true;
    if (!Skip()) return false;
    size_t key_pos = lex_.pos();
    std::string_view key = lex_.ReadName();
    if (key.empty()) return Error(key_pos, Cat("expected an attribute name, got ", Describe()));
    if (!Expect('=', "after attribute name")) return false;
    if (!Skip()) return false;
    std::string_view value;
    LexError e;
    if (!lex_.ScanRawValue(/*stop_at_space=*/true, &value, &e)) return LexFail(e);
    computation->mutable_raw_attributes().push_back({std::string(key), std::string(value)});
  }
}

bool Parser::ResolveInstructionNames(const InstructionNames& names,
                                     std::vector<PendingInstruction>& pending, bool* forward) {
  *forward = false;
  for (size_t i = 0; i < pending.size(); ++i) {
    PendingInstruction& p = pending[i];
    for (const NameRef& ref : p.operands) {
      auto it = names.find(ref.name);
      if (it == names.end()) {
        return Error(ref.pos, Cat("use of undefined instruction '", ref.name, "'"));
      }
      if (it->second.second >= i) *forward = true;
      p.instruction->AppendOperand(it->second.first);
    }
    for (const NameRef& ref : p.control_predecessors) {
      auto it = names.find(ref.name);
      if (it == names.end()) {
        return Error(ref.pos, Cat("use of undefined instruction '", ref.name, "'"));
      }
      if (it->second.first == p.instruction) {
        return Error(ref.pos, "instruction is its own control predecessor");
      }
      if (it->second.second >= i) *forward = true;
      it->second.first->AddControlDependencyTo(p.instruction);
    }
  }
  return true;
}

bool Parser::CheckAcyclic(const std::vector<PendingInstruction>& pending) {
  // Iterative depth-first search over operands and control predecessors.
  absl::flat_hash_map<const Instruction*, size_t> index;
  for (size_t i = 0; i < pending.size(); ++i) index[pending[i].instruction] = i;
  std::vector<uint8_t> state(pending.size(), 0);  // 0 new, 1 on stack, 2 done
  for (size_t s = 0; s < pending.size(); ++s) {
    if (state[s] != 0) continue;
    std::vector<std::pair<size_t, size_t>> stack{{s, 0}};
    state[s] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const Instruction* inst = pending[node].instruction;
      size_t n_ops = inst->operands().size();
      size_t n_total = n_ops + inst->control_predecessors().size();
      if (next < n_total) {
        const Instruction* pred =
            next < n_ops ? inst->operands()[next] : inst->control_predecessors()[next - n_ops];
        ++next;
        size_t j = index[pred];
        if (state[j] == 1) {
          return Error(pending[j].name_pos,
                       Cat("instruction '", pred->name(), "' depends on itself (cycle)"));
        }
        if (state[j] == 0) {
          state[j] = 1;
          stack.push_back({j, 0});
        }
      } else {
        state[node] = 2;
        stack.pop_back();
      }
    }
  }
  return true;
}

bool Parser::CheckParameterNumbers(const std::vector<PendingInstruction>& pending,
                                   std::string_view name, size_t start, int64_t* count) {
  *count = 0;
  std::vector<bool> seen;
  for (const PendingInstruction& p : pending) {
    if (p.instruction->opcode() != Opcode::kParameter) continue;
    int64_t n = p.instruction->attrs().parameter_number;
    if (static_cast<int64_t>(seen.size()) <= n) seen.resize(n + 1, false);
    if (seen[n]) return Error(p.name_pos, Cat("duplicate parameter number ", n));
    seen[n] = true;
    ++*count;
  }
  if (static_cast<int64_t>(seen.size()) != *count) {
    return Error(start,
                 Cat("parameter numbers of computation '", name, "' are not contiguous from 0"));
  }
  return true;
}

bool Parser::ResolveCalls(Module* module) {
  auto lookup = [&](const NameRef& ref, Computation** out) -> bool {
    auto it = computations_by_name_.find(absl::string_view(ref.name.data(), ref.name.size()));
    *out = it != computations_by_name_.end() ? it->second : nullptr;
    if (*out == nullptr) {
      return Error(ref.pos, Cat("use of undefined computation '", ref.name, "'"));
    }
    return true;
  };
  for (PendingCalls& c : pending_calls_) {
    Instruction* inst = c.instruction;
    std::vector<Computation*>& out = inst->mutable_called_computations();
    auto add_all = [&](const std::vector<NameRef>& refs) -> bool {
      for (const NameRef& r : refs) {
        Computation* comp;
        if (!lookup(r, &comp)) return false;
        if (comp == inst->parent()) return Error(r.pos, "a computation cannot call itself");
        out.push_back(comp);
      }
      return true;
    };
    auto single = [&](const std::vector<NameRef>& refs, std::string_view attr) -> bool {
      if (refs.size() != 1) {
        return Error(refs.empty() ? c.pos : refs[1].pos,
                     Cat("'", OpcodeName(inst->opcode()), "' requires exactly one '", attr,
                         "=' computation"));
      }
      return add_all(refs);
    };
    switch (inst->opcode()) {
      case Opcode::kWhile:
        if (!single(c.condition, "condition") || !single(c.body, "body")) return false;
        break;
      case Opcode::kConditional:
        if (!c.branches.empty()) {
          if (!add_all(c.branches)) return false;
        } else {
          if (!single(c.true_c, "true_computation") || !single(c.false_c, "false_computation")) {
            return false;
          }
        }
        break;
      case Opcode::kSelectAndScatter:
        if (!single(c.select, "select") || !single(c.scatter, "scatter")) return false;
        break;
      case Opcode::kFusion:
      case Opcode::kAsyncStart:
        if (!single(c.calls.empty() ? c.to_apply : c.calls, "calls")) return false;
        break;
      case Opcode::kReduce:
      case Opcode::kReduceWindow:
      case Opcode::kMap:
      case Opcode::kSort:
      case Opcode::kScatter:
      case Opcode::kCall:
      case Opcode::kAllReduce:
      case Opcode::kAllReduceStart:
      case Opcode::kReduceScatter:
        if (!single(c.to_apply.empty() ? c.calls : c.to_apply, "to_apply")) return false;
        break;
      default:
        if (!add_all(c.to_apply) || !add_all(c.calls) || !add_all(c.called)) return false;
        break;
    }
  }
  // The call graph must be acyclic (iterative DFS over computations).
  absl::flat_hash_map<const Computation*, uint8_t> state;  // 1 on stack, 2 done
  for (const auto& root : module->computations()) {
    if (state[root.get()] != 0) continue;
    struct Frame {
      const Computation* comp;
      std::vector<const Computation*> callees;
      size_t next = 0;
    };
    auto callees_of = [](const Computation* comp) {
      std::vector<const Computation*> out;
      for (const auto& inst : comp->instructions()) {
        for (const Computation* c : inst->called_computations()) out.push_back(c);
      }
      return out;
    };
    std::vector<Frame> stack;
    stack.push_back({root.get(), callees_of(root.get())});
    state[root.get()] = 1;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.callees.size()) {
        const Computation* callee = f.callees[f.next++];
        uint8_t& st = state[callee];
        if (st == 1) {
          for (const PendingCalls& c : pending_calls_) {
            if (c.instruction->parent() == f.comp) {
              for (const Computation* cc : c.instruction->called_computations()) {
                if (cc == callee) {
                  return Error(c.pos,
                               Cat("computation '", callee->name(), "' calls itself recursively"));
                }
              }
            }
          }
          return Error(0, "recursive computation calls");
        }
        if (st == 0) {
          st = 1;
          stack.push_back({callee, callees_of(callee)});
        }
      } else {
        state[f.comp] = 2;
        stack.pop_back();
      }
    }
  }
  return true;
}

bool Parser::MaybeParseStackFrames(std::string* trailer) {
  // A section keyword alone on its line, then indexed entries, blank lines
  // and further sections; kept verbatim.
  std::string_view t = lex_.text();
  size_t save = lex_.pos();
  if (!Skip()) return false;
  size_t start = lex_.pos();
  auto line_end = [&](size_t p) {
    size_t e = t.find('\n', p);
    return e == std::string_view::npos ? t.size() : e;
  };
  auto is_section_line = [&](size_t p) {
    size_t e = line_end(p);
    std::string_view line = t.substr(p, e - p);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    return IsStackFrameSection(line);
  };
  if (lex_.AtEnd() || !is_section_line(start)) {
    lex_.set_pos(save);
    return true;
  }
  size_t p = start;
  size_t last_end = start;
  while (p < t.size()) {
    size_t e = line_end(p);
    std::string_view line = t.substr(p, e - p);
    size_t q = 0;
    while (q < line.size() && (line[q] == ' ' || line[q] == '\t' || line[q] == '\r')) ++q;
    if (q == line.size()) {  // blank
      p = e + 1;
      continue;
    }
    if (IsDigit(line[q]) || is_section_line(p)) {
      size_t end = e;
      while (end > p && (t[end - 1] == ' ' || t[end - 1] == '\t' || t[end - 1] == '\r')) --end;
      last_end = end;
      p = e + 1;
      continue;
    }
    break;
  }
  if (!trailer->empty()) trailer->append("\n\n");
  trailer->append(t.substr(start, last_end - start));
  lex_.set_pos(last_end);
  return true;
}

bool Parser::ParseHeader(Module* module) {
  if (!Skip()) return false;
  if (!lex_.TryConsumeKeyword("HloModule")) return true;  // no header: accept bare computations
  if (!Skip()) return false;
  size_t name_pos = lex_.pos();
  std::string_view name = lex_.ReadNameWithPercent();
  if (name.empty()) return Error(name_pos, Cat("expected the module name, got ", Describe()));
  module->set_name(std::string(name));
  while (true) {
    size_t save = lex_.pos();
    LexError e;
    if (!lex_.SkipSpaceInLine(&e)) return LexFail(e);
    if (!lex_.TryConsume(',')) {
      lex_.set_pos(save);
      break;
    }
    if (!Skip()) return false;
    size_t key_pos = lex_.pos();
    std::string_view key = lex_.ReadName();
    if (key.empty()) return Error(key_pos, Cat("expected a module attribute, got ", Describe()));
    // XLA rejects a header that names an attribute twice (which value holds?).
    for (const RawAttribute& seen : module->raw_attributes()) {
      if (seen.key == key) return Error(key_pos, Cat("duplicate module attribute '", key, "'"));
    }
    if (!Expect('=', "after module attribute name")) return false;
    if (!Skip()) return false;
    std::string_view value;
    if (!lex_.ScanRawValue(/*stop_at_space=*/false, &value, &e)) return LexFail(e);
    module->mutable_raw_attributes().push_back({std::string(key), std::string(value)});
  }
  return true;
}

absl::StatusOr<std::unique_ptr<Module>> Parser::ParseModule() {
  auto module = std::make_unique<Module>("module");
  std::string trailer;
  bool ok = ParseHeader(module.get()) && MaybeParseStackFrames(&trailer);
  Computation* last = nullptr;
  while (ok) {
    if (!Skip()) {
      ok = false;
      break;
    }
    if (lex_.AtEnd()) break;
    if (!MaybeParseStackFrames(&trailer)) {
      ok = false;
      break;
    }
    if (!Skip()) {
      ok = false;
      break;
    }
    if (lex_.AtEnd()) break;
    bool is_entry = false;
    if (!ParseComputation(module.get(), &is_entry)) {
      ok = false;
      break;
    }
    last = module->computations().back().get();
  }
  if (ok && last == nullptr) ok = Error(lex_.pos(), "module has no computations");
  if (ok) ok = ResolveCalls(module.get());
  if (!ok) return status_;
  if (module->entry_computation() == nullptr) module->set_entry_computation(last);
  module->set_trailer(std::move(trailer));
  return module;
}

absl::StatusOr<Shape> Parser::ParseShapeOnly() {
  Shape shape;
  if (!ParseShape(&shape)) return status_;
  if (!Skip()) return status_;
  if (!lex_.AtEnd()) {
    Error(lex_.pos(), Cat("unexpected ", Describe(), " after the shape"));
    return status_;
  }
  return shape;
}

// What an input that is not HLO text most likely is, and how to get HLO text
// instead; nullopt for anything else (the parser's own errors then say what is
// wrong). Two stand-ins are common: a binary HloModuleProto (XLA's dumps
// without --xla_dump_hlo_as_text) and StableHLO, the MLIR text that JAX's
// `lower(...).as_text()` prints by default.
std::optional<std::string> NotHloText(std::string_view text) {
  const std::string_view head = text.substr(0, 4096);
  // Text files hold no control bytes besides tab, newline, vertical tab, form feed and return.
  if (absl::c_any_of(head, [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte < 0x09 || (byte > 0x0d && byte < 0x20) || byte == 0x7f;
      })) {
    return "binary data, not HLO text (an HloModuleProto?): hlogym reads XLA's text format; "
           "ask XLA for text (--xla_dump_hlo_as_text), or run the program under `hlogym harvest`";
  }
  size_t start = 0;
  while (start < head.size()) {
    start = head.find_first_not_of(" \t\r\n", start);
    if (start == std::string_view::npos || !head.substr(start).starts_with("//")) break;
    start = head.find('\n', start);
  }
  if (start == std::string_view::npos) return std::nullopt;
  const std::string_view first = head.substr(start);
  for (std::string_view mlir : {"module @", "module {", "module attributes", "func.func", "#loc",
                                "\"builtin.module\"", "builtin.module"}) {
    if (first.starts_with(mlir)) {
      return "this is MLIR (StableHLO) text, not HLO text: from JAX print HLO with "
             "jax.jit(f).lower(*args).as_text(dialect=\"hlo\"), or run the program under "
             "`hlogym harvest`, which keeps each module as XLA's pipeline receives it";
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                                    std::string_view filename) {
  if (std::optional<std::string> other = NotHloText(text)) {
    return absl::InvalidArgumentError(Cat(filename, ":1:1: error: ", *other));
  }
  Parser parser(text, filename);
  absl::StatusOr<std::unique_ptr<Module>> module = parser.ParseModule();
  // Parsed names go into the shared frozen set, so clones do not copy them.
  if (module.ok()) (*module)->FreezeNames();
  return module;
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  Parser parser(text, "<shape>");
  return parser.ParseShapeOnly();
}

}  // namespace hlogym
