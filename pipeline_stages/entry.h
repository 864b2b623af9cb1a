// The entry model: what flows through a pipeline.
//
// An Entry is one log line with its labels, timestamp, structured metadata and tenant, plus the
// `extracted` map that stages use to pass values to each other. `extracted` dies with the entry:
// the pipeline recycles its storage once the entry leaves the last stage.
#pragma once

#include <absl/container/inlined_vector.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skald::stages {

struct Label {
  std::string name;
  std::string value;
  friend bool operator==(const Label&, const Label&) = default;
};

// LabelSet: label name -> value, iterated in name order.
//
// Copies share one immutable base set (a reference count), and changes made to a copy live in a
// small inline overlay, so an entry that adds two labels to its container's base set allocates
// no map and copies no strings of the base.
class LabelSet {
 public:
  LabelSet() = default;
  LabelSet(std::initializer_list<std::pair<std::string_view, std::string_view>> labels);
  // Builds a set from pairs in any order; for a repeated name the last value wins.
  static LabelSet FromVector(std::vector<Label> labels);

  std::optional<std::string_view> Get(std::string_view name) const;
  bool Contains(std::string_view name) const { return Get(name).has_value(); }
  void Set(std::string_view name, std::string_view value);
  void Erase(std::string_view name);
  void Clear();

  size_t size() const;
  bool empty() const { return size() == 0; }

  // Calls f(name, value) for every label in name order.
  template <typename F>
  void ForEach(F&& f) const;

  std::vector<Label> ToVector() const;
  // {a="1", b="2"}: the form Loki and Prometheus print; values escaped as Go's %q does.
  std::string ToString() const;
  // Folds the overlay into a new shared base (allocates); cheap copies afterwards.
  void Compact();

  friend bool operator==(const LabelSet& a, const LabelSet& b);

 private:
  struct Edit {
    std::string name;
    std::string value;
    bool erased = false;
  };
  using Base = std::vector<Label>;

  const Label* FindBase(std::string_view name) const;
  // Index of the first edit whose name is >= name.
  size_t EditLowerBound(std::string_view name) const;

  std::shared_ptr<const Base> base_;    // sorted by name, unique names
  absl::InlinedVector<Edit, 4> edits_;  // sorted by name; overrides base
};

template <typename F>
void LabelSet::ForEach(F&& f) const {
  size_t bi = 0, ei = 0;
  const size_t bn = base_ ? base_->size() : 0;
  while (bi < bn || ei < edits_.size()) {
    if (ei == edits_.size() || (bi < bn && (*base_)[bi].name < edits_[ei].name)) {
      f(std::string_view((*base_)[bi].name), std::string_view((*base_)[bi].value));
      ++bi;
      continue;
    }
    const Edit& e = edits_[ei++];
    if (bi < bn && (*base_)[bi].name == e.name) ++bi;
    if (!e.erased) f(std::string_view(e.name), std::string_view(e.value));
  }
}

// A value of the extracted map: string, number, bool or null. Objects and arrays are stored as
// their compact JSON text (a string), as the reference does.
class Value {
 public:
  enum class Kind : uint8_t { kNull, kString, kNumber, kBool };

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }

  void SetNull() { kind_ = Kind::kNull; }
  void SetString(std::string_view s) {
    kind_ = Kind::kString;
    str_.assign(s.data(), s.size());
  }
  // Returns the string buffer to fill (already cleared); the value becomes a string.
  std::string& MutableString() {
    kind_ = Kind::kString;
    str_.clear();
    return str_;
  }
  void SetDouble(double d);
  // An integral number kept exact (e.g. a nanosecond timestamp that a double would round).
  void SetInt(int64_t i);
  void SetBool(bool b) {
    kind_ = Kind::kBool;
    bool_ = b;
  }

  const std::string& string() const { return str_; }  // only for kString
  double number() const { return is_int_ ? static_cast<double>(int_) : double_; }
  bool is_int() const { return kind_ == Kind::kNumber && is_int_; }
  int64_t integer() const { return int_; }
  bool boolean() const { return bool_; }

  // The string form STAGES.md defines: strings as-is; numbers in shortest round-trip decimal
  // without exponent; bools true/false; null has none. The view lives until the next change.
  std::optional<std::string_view> AsString() const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  bool is_int_ = false;
  mutable bool formatted_ = false;  // str_ holds the number's text
  int64_t int_ = 0;
  double double_ = 0;
  mutable std::string str_;
};

// Formats a double in shortest round-trip decimal without exponent (1562723913000, 12.34).
void AppendNumber(double d, std::string& out);

// The extracted map: key -> Value, in insertion order. Clear() keeps every buffer's capacity,
// so a recycled map fills without allocating once it has seen a typical line.
class Extracted {
 public:
  Extracted() = default;
  Extracted(const Extracted&) = default;
  Extracted& operator=(const Extracted&) = default;
  Extracted(Extracted&& o) noexcept : slots_(std::move(o.slots_)), size_(o.size_) {
    o.slots_.clear();
    o.size_ = 0;
  }
  Extracted& operator=(Extracted&& o) noexcept {
    slots_ = std::move(o.slots_);
    size_ = o.size_;
    o.slots_.clear();
    o.size_ = 0;
    return *this;
  }
  Value* Find(std::string_view key);
  const Value* Find(std::string_view key) const;
  // The slot for key (created if absent, previous content kept); assign through it.
  Value& Upsert(std::string_view key);
  void SetString(std::string_view key, std::string_view v) { Upsert(key).SetString(v); }
  // Upsert that tries slot `hint` first (stages remember where their keys were on the last
  // line; lines of one stream usually have the same layout). Sets hint to the slot used.
  Value& UpsertHinted(std::string_view key, size_t& hint);
  // Appends a key the caller knows is absent.
  Value& AppendNew(std::string_view key);
  Value& at(size_t i) { return slots_[i].value; }
  // Forgets keys added after size() was n.
  void TruncateTo(size_t n) { size_ = n < size_ ? n : size_; }
  void Erase(std::string_view key);
  void Clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool has_storage() const { return !slots_.empty(); }

  template <typename F>
  void ForEach(F&& f) const {
    for (size_t i = 0; i < size_; ++i) f(std::string_view(slots_[i].key), slots_[i].value);
  }

 private:
  struct Slot {
    std::string key;
    Value value;
  };
  std::vector<Slot> slots_;  // [0, size_) live; the rest are spare buffers
  size_t size_ = 0;
};

struct MetadataPair {
  std::string name;
  std::string value;
  friend bool operator==(const MetadataPair&, const MetadataPair&) = default;
};

struct Entry {
  LabelSet labels;
  int64_t timestamp_ns = 0;
  std::string line;
  std::vector<MetadataPair> structured_metadata;  // ordered name/value pairs
  std::string tenant;                             // empty: the client's default tenant
  Extracted extracted;                            // between stages only
};

// Label names: ^[a-zA-Z_][a-zA-Z0-9_]*$.
bool IsValidLabelName(std::string_view name);
bool IsValidUtf8(std::string_view s);

}  // namespace skald::stages
