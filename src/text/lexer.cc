#include "text/lexer.h"

#include <vector>

namespace hlogym::text {

bool Lexer::SkipSpace(LexError* error) {
  const size_t n = text_.size();
  while (pos_ < n) {
    char c = text_[pos_];
    if (IsSpace(c)) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) {
        error->pos = pos_;
        error->message = "unterminated comment";
        return false;
      }
      pos_ = end + 2;
    } else if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '/') {
      size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? n : end + 1;
    } else {
      break;
    }
  }
  return true;
}

bool Lexer::SkipSpaceInLine(LexError* error) {
  const size_t n = text_.size();
  while (pos_ < n) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) {
        error->pos = pos_;
        error->message = "unterminated comment";
        return false;
      }
      pos_ = end + 2;
    } else if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '/') {
      size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? n : end;
    } else {
      break;
    }
  }
  return true;
}

bool Lexer::TryConsumeKeyword(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return false;
  if (pos_ + word.size() < text_.size() && IsNameChar(text_[pos_ + word.size()])) return false;
  pos_ += word.size();
  return true;
}

std::string_view Lexer::ReadName() {
  size_t start = pos_;
  const size_t n = text_.size();
  while (pos_ < n && IsNameChar(text_[pos_])) ++pos_;
  return text_.substr(start, pos_ - start);
}

std::string_view Lexer::ReadNameWithPercent() {
  size_t save = pos_;
  if (Peek() == '%') ++pos_;
  std::string_view name = ReadName();
  if (name.empty()) pos_ = save;
  return name;
}

bool Lexer::ReadQuoted(std::string_view* contents, LexError* error) {
  size_t start = pos_;
  ++pos_;  // opening quote
  const size_t n = text_.size();
  while (pos_ < n) {
    char c = text_[pos_];
    if (c == '\\') {
      pos_ += 2;
      continue;
    }
    if (c == '"') {
      *contents = text_.substr(start + 1, pos_ - start - 1);
      ++pos_;
      return true;
    }
    ++pos_;
  }
  pos_ = n;
  error->pos = start;
  error->message = "unterminated string";
  return false;
}

bool Lexer::ScanRawValue(bool stop_at_space, std::string_view* value, LexError* error) {
  const size_t start = pos_;
  const size_t n = text_.size();
  std::vector<char> stack;  // expected closers; no recursion, so no depth limit needed
  size_t last_nonspace = start;
  while (pos_ < n) {
    char c = text_[pos_];
    if (c == '"') {
      std::string_view ignored;
      if (!ReadQuoted(&ignored, error)) return false;
      last_nonspace = pos_;
      continue;
    }
    if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '*') {
      if (stack.empty()) break;
      size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) {
        error->pos = pos_;
        error->message = "unterminated comment";
        return false;
      }
      pos_ = end + 2;
      last_nonspace = pos_;
      continue;
    }
    if (stack.empty()) {
      if (c == ',' || c == '\n' || c == ')' || c == ']' || c == '}') break;
      if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '/') break;
      if (stop_at_space && IsSpace(c)) break;
    }
    if (c == '(') {
      stack.push_back(')');
    } else if (c == '[') {
      stack.push_back(']');
    } else if (c == '{') {
      stack.push_back('}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (stack.back() != c) {
        error->pos = pos_;
        error->message = std::string("mismatched '") + c + "' in attribute value";
        return false;
      }
      stack.pop_back();
    }
    ++pos_;
    if (!IsSpace(c)) last_nonspace = pos_;
  }
  if (!stack.empty()) {
    error->pos = start;
    error->message = "unbalanced brackets in attribute value";
    return false;
  }
  *value = text_.substr(start, last_nonspace - start);
  return true;
}

void Lexer::LineCol(size_t pos, int64_t* line, int64_t* col) const {
  if (pos > text_.size()) pos = text_.size();
  int64_t l = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < pos; ++i) {
    if (text_[i] == '\n') {
      ++l;
      line_start = i + 1;
    }
  }
  *line = l;
  *col = static_cast<int64_t>(pos - line_start) + 1;
}

}  // namespace hlogym::text
