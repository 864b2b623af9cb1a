// StreamSelector: a rendered stream selector (`{a="x", b="y"}`) shared by the entries of one
// stream.
//
// Every entry handed to the Loki client names its stream; entries of a stream share one
// immutable string, so copying a selector is a reference count, not an allocation, and its hash
// (which picks the client's sender lane) is computed once.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace skald {

class StreamSelector {
 public:
  StreamSelector() = default;
  // Implicit: a selector is its text (tests and the client's callers build them from strings).
  StreamSelector(std::string text);  // NOLINT(google-explicit-constructor)
  StreamSelector(const char* text) : StreamSelector(std::string(text)) {}  // NOLINT

  std::string_view view() const { return rep_ ? std::string_view(rep_->text) : std::string_view(); }
  std::size_t size() const { return rep_ ? rep_->text.size() : 0; }
  bool empty() const { return size() == 0; }
  // std::hash of the text, computed at construction.
  std::size_t hash() const { return rep_ ? rep_->hash : EmptyHash(); }
  // True when both share one text (then they are equal without comparing bytes).
  bool SameText(const StreamSelector& other) const { return rep_ == other.rep_; }

 private:
  struct Rep {
    std::string text;
    std::size_t hash;
  };
  static std::size_t EmptyHash();

  std::shared_ptr<const Rep> rep_;
};

}  // namespace skald
