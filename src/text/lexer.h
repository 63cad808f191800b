// Character-level lexer for XLA's HLO text format. HLO text is
// context-sensitive (shapes "f32[2]{1,0}", padding "0_0x1_1", dim labels
// "b01f_01io->b01f", ...), so instead of a token stream the lexer offers a
// cursor over the text with the small scanning primitives the parser
// combines. Everything works on string_views into the input; nothing
// allocates per character.
#ifndef HLOGYM_TEXT_LEXER_H_
#define HLOGYM_TEXT_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hlogym::text {

inline bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Where a lexical error happened and why.
struct LexError {
  size_t pos = 0;
  std::string message;
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::string_view text() const { return text_; }
  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  char PeekAt(size_t offset) const {
    return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0';
  }
  void Advance(size_t n = 1) { pos_ = pos_ + n < text_.size() ? pos_ + n : text_.size(); }

  // Skips whitespace, /* */ and // comments. Returns false (and fills
  // `error`) on an unterminated /* comment.
  bool SkipSpace(LexError* error);
  // Skips spaces and tabs and comments on the current line only.
  bool SkipSpaceInLine(LexError* error);

  // If the next character is `c`, consumes it.
  bool TryConsume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  // Consumes `word` if the text continues with it and it is not followed by
  // a name character.
  bool TryConsumeKeyword(std::string_view word);

  // A maximal run of name characters ([A-Za-z0-9_.-]); empty if none.
  std::string_view ReadName();
  // A name with an optional leading '%' (which is not part of the result).
  std::string_view ReadNameWithPercent();

  // A double-quoted string with backslash escapes, starting at the current
  // '"'. Returns the text between the quotes, still escaped. Fills `error`
  // and returns false when unterminated.
  bool ReadQuoted(std::string_view* contents, LexError* error);

  // Scans an attribute value verbatim: balanced (), [], {} and quoted
  // strings; stops at ',' at depth 0, a newline at depth 0, an unbalanced
  // closer, a comment start at depth 0, the end of the text, or (when
  // `stop_at_space`) whitespace at depth 0. Returns the value without
  // trailing whitespace.
  bool ScanRawValue(bool stop_at_space, std::string_view* value, LexError* error);

  // 1-based line and column of `pos`.
  void LineCol(size_t pos, int64_t* line, int64_t* col) const;

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace hlogym::text

#endif  // HLOGYM_TEXT_LEXER_H_
