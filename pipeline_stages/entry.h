// The entry model: what flows through a pipeline.
//
// An Entry is one log line with its labels, timestamp, structured metadata and tenant, plus the
// `extracted` map that stages use to pass values to each other. `extracted` dies with the entry:
// the pipeline recycles its storage once the entry leaves the last stage.
#pragma once

#include <absl/container/inlined_vector.h>

#include <algorithm>
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
  // The whole set as one shared sorted vector (compacts first if there are changes); null when
  // empty.
  std::shared_ptr<const std::vector<Label>> SharedBase() {
    Compact();
    return base_;
  }

  friend bool operator==(const LabelSet& a, const LabelSet& b);

 private:
  struct Edit {
    Edit() = default;
    Edit(std::string_view n, std::string_view v, bool e) : name(n), value(v), erased(e) {}
    std::string name;
    std::string value;
    bool erased = false;
  };
  using Base = std::vector<Label>;

  const Label* FindBase(std::string_view name) const;
  // Index of the edit of name, or npos.
  size_t EditOf(std::string_view name) const;

  std::shared_ptr<const Base> base_;    // sorted by name, unique names
  absl::InlinedVector<Edit, 4> edits_;  // unique names, in the order made; override base
};

template <typename F>
void LabelSet::ForEach(F&& f) const {
  // Edits are kept in the order they were made; visit them in name order.
  const size_t en = edits_.size();
  uint8_t order[16];
  const bool small = en <= 16;
  std::vector<size_t> big;
  if (small) {
    for (size_t i = 0; i < en; ++i) {
      size_t j = i;
      while (j > 0 && edits_[order[j - 1]].name > edits_[i].name) {
        order[j] = order[j - 1];
        --j;
      }
      order[j] = static_cast<uint8_t>(i);
    }
  } else {
    big.resize(en);
    for (size_t i = 0; i < en; ++i) big[i] = i;
    std::sort(big.begin(), big.end(),
              [&](size_t a, size_t b) { return edits_[a].name < edits_[b].name; });
  }
  auto edit_at = [&](size_t k) -> const Edit& { return edits_[small ? order[k] : big[k]]; };
  size_t bi = 0, ei = 0;
  const size_t bn = base_ ? base_->size() : 0;
  while (bi < bn || ei < en) {
    if (ei == en || (bi < bn && (*base_)[bi].name < edit_at(ei).name)) {
      f(std::string_view((*base_)[bi].name), std::string_view((*base_)[bi].value));
      ++bi;
      continue;
    }
    const Edit& e = edit_at(ei++);
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
  // Exchanges contents, buffers included (cheaper than three moves).
  friend void swap(Value& a, Value& b) noexcept {
    std::swap(a.kind_, b.kind_);
    std::swap(a.bool_, b.bool_);
    std::swap(a.is_int_, b.is_int_);
    std::swap(a.formatted_, b.formatted_);
    std::swap(a.int_, b.int_);
    std::swap(a.double_, b.double_);
    a.str_.swap(b.str_);
  }

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

// The extracted map: key -> Value. Clear() keeps every buffer's capacity, so a recycled map
// fills without allocating once it has seen a typical line.
//
// The entry's initial labels are part of the map from the start (STAGES.md: every label is
// copied into extracted as a string before the first stage) but are copied into a slot only
// when a stage reads or writes that key, so a stage list that never looks at them pays nothing.
// A view returned by AsString() of one value may be invalidated by the next Find/Upsert of an
// other key (a slot may be added); call MaterializeAll() first to hold several views at once.
class Extracted {
 public:
  Extracted() = default;
  Extracted(const Extracted&) = default;
  Extracted& operator=(const Extracted&) = default;
  Extracted(Extracted&& o) noexcept { *this = std::move(o); }
  Extracted& operator=(Extracted&& o) noexcept {
    slots_ = std::move(o.slots_);
    size_ = o.size_;
    labels_ = std::move(o.labels_);
    label_heads_for_ = std::move(o.label_heads_for_);
    label_heads_ = std::move(o.label_heads_);
    label_filter_ = o.label_filter_;
    index_ = std::move(o.index_);
    generation_ = o.generation_;
    o.slots_.clear();
    o.size_ = 0;
    o.label_heads_.clear();
    o.index_.clear();
    return *this;
  }

  // Empties the map, then makes `labels` (sorted, as LabelSet keeps them) its initial content.
  void Reset(std::shared_ptr<const std::vector<Label>> labels) {
    size_ = 0;
    labels_ = std::move(labels);
    if (++generation_ == 0) {  // wrapped: forget every stamp
      for (auto& e : index_) e.generation = 0;
      generation_ = 1;
    }
  }
  void Clear() { Reset(nullptr); }

  Value* Find(std::string_view key);
  const Value* Find(std::string_view key) const { return const_cast<Extracted*>(this)->Find(key); }
  // The slot for key (created null if absent, else its current value kept); assign through it.
  Value& Upsert(std::string_view key);
  void SetString(std::string_view key, std::string_view v) { Upsert(key).SetString(v); }
  // Upsert that tries slot `hint` first (stages remember where their keys were on the last
  // line; lines of one stream usually have the same layout). Sets hint to the slot used.
  Value& UpsertHinted(std::string_view key, size_t& hint);
  void Erase(std::string_view key);
  // Copies every initial label into its slot, so that views stay valid across lookups.
  void MaterializeAll();

  bool has_storage() const { return !slots_.empty(); }

  // Calls f(key, value) for every key (labels included).
  template <typename F>
  void ForEach(F&& f) const {
    const_cast<Extracted*>(this)->MaterializeAll();
    for (size_t i = 0; i < size_; ++i) {
      if (!slots_[i].erased) f(std::string_view(slots_[i].key), slots_[i].value);
    }
  }

 private:
  struct Slot {
    std::string key;
    uint64_t head = 0;  // KeyHead(key): compared before the bytes
    Value value;
    bool erased = false;  // hides a label of the same name
  };
  // Length and a few bytes of a key: equal keys have equal heads; compared before the bytes.
  static uint64_t KeyHead(std::string_view key) {
    const size_t n = key.size();
    if (n == 0) return 0;
    auto byte = [&](size_t i) { return static_cast<uint64_t>(static_cast<uint8_t>(key[i])); };
    return n | byte(0) << 32 | byte(n - 1) << 40 | byte(n >> 1) << 48 | byte(n >> 2) << 56;
  }
  // The slot index of key, or npos.
  size_t SlotOf(std::string_view key, uint64_t head) const;
  const Label* InitialLabel(std::string_view key, uint64_t head) const;
  Value& AppendNew(std::string_view key, uint64_t head);
  Value& UpsertWithHead(std::string_view key, uint64_t head, size_t& index);

  std::vector<Slot> slots_;  // [0, size_) live; the rest are spare buffers
  size_t size_ = 0;
  std::shared_ptr<const std::vector<Label>> labels_;
  // KeyHead of each label name of labels_heads_for_ (held, so its address is not reused).
  std::shared_ptr<const std::vector<Label>> label_heads_for_;
  std::vector<uint64_t> label_heads_;
  uint64_t label_filter_ = 0;  // bit (head % 64) set for every label head: a quick "not a label"
  // Open-addressing index head -> slot for the first kIndexedSlots slots; an entry counts only
  // when its generation is the current one, so Reset() clears it in O(1).
  struct IndexEntry {
    uint32_t generation = 0;
    uint32_t slot = 0;
  };
  static constexpr size_t kIndexSize = 64;
  static constexpr size_t kIndexedSlots = 32;
  std::vector<IndexEntry> index_;
  uint32_t generation_ = 1;
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
