#include "hlo/replica_groups.h"

#include <cctype>
#include <numeric>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hlogym {

namespace {

// A cursor over attribute text that reads integers and punctuation.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  void SkipSpaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpaces();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  std::optional<int64_t> Integer() {
    SkipSpaces();
    size_t end = pos_;
    while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
    int64_t value = 0;
    if (end == pos_ || !absl::SimpleAtoi(std::string(text_.substr(pos_, end - pos_)), &value)) {
      return std::nullopt;
    }
    pos_ = end;
    return value;
  }
  // `open int (, int)* close`, possibly empty.
  std::optional<std::vector<int64_t>> List(char open, char close) {
    std::vector<int64_t> values;
    if (!Consume(open)) return std::nullopt;
    if (Consume(close)) return values;
    do {
      std::optional<int64_t> value = Integer();
      if (!value) return std::nullopt;
      values.push_back(*value);
    } while (Consume(','));
    if (!Consume(close)) return std::nullopt;
    return values;
  }
  bool AtEnd() {
    SkipSpaces();
    return pos_ == text_.size();
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

// `<=[d0,d1,...]T(p0,p1,...)`: the row-major iota of shape [d0,d1,...]
// transposed by the permutation (none: in order), flattened.
std::optional<std::vector<int64_t>> ReadIotaList(Reader& reader) {
  if (!reader.Consume('<') || !reader.Consume('=')) return std::nullopt;
  std::optional<std::vector<int64_t>> reshape = reader.List('[', ']');
  if (!reshape || reshape->empty()) return std::nullopt;
  std::vector<int64_t> perm(reshape->size());
  std::iota(perm.begin(), perm.end(), 0);
  if (reader.Peek('T')) {
    reader.Consume('T');
    std::optional<std::vector<int64_t>> written = reader.List('(', ')');
    if (!written || written->size() != reshape->size()) return std::nullopt;
    perm = *written;
  }
  int64_t total = 1;
  for (int64_t d : *reshape) {
    if (d <= 0 || d > (int64_t{1} << 24)) return std::nullopt;
    total *= d;
    if (total > (int64_t{1} << 24)) return std::nullopt;
  }
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) return std::nullopt;
    seen[p] = true;
  }
  // Strides of the row-major iota of `reshape`, read in the permuted order.
  const int64_t rank = static_cast<int64_t>(reshape->size());
  std::vector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * (*reshape)[d + 1];
  std::vector<int64_t> index(rank, 0);  // index in the transposed array
  std::vector<int64_t> flat;
  flat.reserve(total);
  for (int64_t n = 0; n < total; ++n) {
    int64_t value = 0;
    for (int64_t d = 0; d < rank; ++d) value += index[d] * strides[perm[d]];
    flat.push_back(value);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < (*reshape)[perm[d]]) break;
      index[d] = 0;
    }
  }
  return flat;
}

std::optional<ReplicaGroupList> ParseIota(Reader& reader) {
  std::optional<std::vector<int64_t>> shape = reader.List('[', ']');
  if (!shape || shape->size() != 2) return std::nullopt;
  std::optional<std::vector<int64_t>> flat = ReadIotaList(reader);
  if (!flat || !reader.AtEnd()) return std::nullopt;
  const int64_t groups = (*shape)[0], size = (*shape)[1];
  if (groups <= 0 || size <= 0 || groups * size != static_cast<int64_t>(flat->size())) {
    return std::nullopt;
  }
  ReplicaGroupList result(groups);
  for (int64_t g = 0; g < groups; ++g) {
    result[g].assign(flat->begin() + g * size, flat->begin() + (g + 1) * size);
  }
  return result;
}

std::optional<ReplicaGroupList> ParseGroups(std::string_view text) {
  Reader reader(text);
  if (reader.AtEnd()) return ReplicaGroupList{};
  if (reader.Peek('[')) return ParseIota(reader);
  ReplicaGroupList groups;
  if (!reader.Consume('{')) return std::nullopt;
  if (!reader.Consume('}')) {
    do {
      std::optional<std::vector<int64_t>> group = reader.List('{', '}');
      if (!group) return std::nullopt;
      groups.push_back(std::move(*group));
    } while (reader.Consume(','));
    if (!reader.Consume('}')) return std::nullopt;
  }
  if (!reader.AtEnd()) return std::nullopt;
  return groups;
}

}  // namespace

std::optional<ReplicaGroupList> ParseReplicaGroups(std::string_view text) {
  return ParseGroups(text);
}

std::optional<std::vector<int64_t>> ParseIotaList(std::string_view text) {
  Reader reader(text);
  std::optional<std::vector<int64_t>> flat = ReadIotaList(reader);
  if (!flat || !reader.AtEnd()) return std::nullopt;
  return flat;
}

absl::StatusOr<ReplicaGroupList> GetReplicaGroups(const Instruction& instruction) {
  const RawAttribute* attr = instruction.attrs().FindRaw("replica_groups");
  if (attr == nullptr) return ReplicaGroupList{};
  std::optional<ReplicaGroupList> groups = ParseGroups(attr->value);
  if (!groups) {
    return absl::InvalidArgumentError(
        absl::StrCat(instruction.name(), ": cannot read replica_groups=", attr->value));
  }
  return *groups;
}

std::string FormatReplicaGroups(const ReplicaGroupList& groups) {
  std::string text = "{";
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) text += ",";
    text += "{";
    for (size_t i = 0; i < groups[g].size(); ++i) {
      if (i > 0) text += ",";
      text += std::to_string(groups[g][i]);
    }
    text += "}";
  }
  return text + "}";
}

}  // namespace hlogym
