// The entry model: what flows through a pipeline.
//
// An Entry is one log line with its labels, timestamp, structured metadata and tenant, plus the
// `extracted` map that stages use to pass values to each other. `extracted` dies with the entry:
// the pipeline recycles its storage once the entry leaves the last stage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
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
// small overlay: records of (name, value) bytes in one buffer, inline up to 48 bytes. An entry
// that adds two short labels to its container's base set allocates nothing, and moving it
// copies a few words.
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
  // A 64-bit hash of the names and values (FNV-1a): equal sets hash equal.
  uint64_t Hash() const;

  // For caches of what is derived from a set: sets copied from one set share its base until
  // one of them is compacted, and two sets that share a base and whose OverlayBytes() are equal
  // are equal (equal sets may still differ there: edits made in another order).
  bool SharesBaseWith(const LabelSet& other) const { return base_ == other.base_; }
  std::string_view OverlayBytes() const { return edits_.bytes(); }

 private:
  using Base = std::vector<Label>;

  // The overlay: records one after another, each an 8-byte header (name length; value length
  // with bit 31 set when the record erases the name) then the name and value bytes. Names are
  // unique; records are in the order made.
  class Edits {
   public:
    struct Record {
      std::string_view name;
      std::string_view value;
      bool erased;
      uint32_t offset;  // of the header
      uint32_t size;    // header and bytes
    };

    Edits() noexcept { std::memset(inline_, 0, kInline); }
    ~Edits() {
      if (cap_ > kInline) delete[] heap_;
    }
    Edits(const Edits& o) : Edits() {
      if (o.size_ != 0) Assign(o.data(), o.size_);
    }
    Edits& operator=(const Edits& o) {
      if (o.size_ == 0) {
        size_ = 0;
      } else if (this != &o) {
        Assign(o.data(), o.size_);
      }
      return *this;
    }
    Edits(Edits&& o) noexcept : size_(o.size_), cap_(o.cap_) {
      std::memcpy(inline_, o.inline_, kInline);  // the bytes, or the heap pointer
      o.size_ = 0;
      o.cap_ = kInline;
    }
    Edits& operator=(Edits&& o) noexcept {
      if (this != &o) {
        if (cap_ > kInline) delete[] heap_;
        size_ = o.size_;
        cap_ = o.cap_;
        std::memcpy(inline_, o.inline_, kInline);
        o.size_ = 0;
        o.cap_ = kInline;
      }
      return *this;
    }

    bool empty() const { return size_ == 0; }
    void clear() { size_ = 0; }
    std::string_view bytes() const { return std::string_view(data(), size_); }

    // Calls f(const Record&) for each record in the order made; stops when f returns false.
    template <typename F>
    void Visit(F&& f) const {
      const char* d = data();
      for (uint32_t off = 0; off < size_;) {
        uint32_t nl, vl;
        std::memcpy(&nl, d + off, 4);
        std::memcpy(&vl, d + off + 4, 4);
        const bool erased = vl >> 31;
        vl &= 0x7FFFFFFFu;
        const Record r{std::string_view(d + off + 8, nl), std::string_view(d + off + 8 + nl, vl),
                       erased, off, 8 + nl + vl};
        if (!f(r)) return;
        off += r.size;
      }
    }
    // The record of name, if any.
    std::optional<Record> Find(std::string_view name) const {
      const char* d = data();
      for (uint32_t off = 0; off < size_;) {
        uint32_t nl, vl;
        std::memcpy(&nl, d + off, 4);
        std::memcpy(&vl, d + off + 4, 4);
        const uint32_t len = vl & 0x7FFFFFFFu;
        if (nl == name.size() && std::memcmp(d + off + 8, name.data(), nl) == 0) {
          return Record{std::string_view(d + off + 8, nl), std::string_view(d + off + 8 + nl, len),
                        (vl >> 31) != 0, off, 8 + nl + len};
        }
        off += 8 + nl + len;
      }
      return std::nullopt;
    }
    void Append(std::string_view name, std::string_view value, bool erased) {
      const size_t n = 8 + name.size() + value.size();
      if (value.size() >= 0x80000000u) TooLong();
      if (size_t{size_} + n > cap_) Reserve(size_t{size_} + n);
      char* d = data() + size_;
      const uint32_t nl = static_cast<uint32_t>(name.size());
      const uint32_t vl = static_cast<uint32_t>(value.size()) | (erased ? 0x80000000u : 0);
      std::memcpy(d, &nl, 4);
      std::memcpy(d + 4, &vl, 4);
      CopyBytes(d + 8, name.data(), name.size());
      CopyBytes(d + 8 + name.size(), value.data(), value.size());
      size_ += static_cast<uint32_t>(n);
    }
    void Remove(const Record& r);

   private:
    static constexpr uint32_t kInline = 48;
    const char* data() const { return cap_ > kInline ? heap_ : inline_; }
    char* data() { return cap_ > kInline ? heap_ : inline_; }
    void Assign(const char* d, uint32_t n);
    void Reserve(size_t n);
    [[noreturn]] static void TooLong();

    uint32_t size_ = 0;
    uint32_t cap_ = kInline;
    union {
      char inline_[kInline];
      char* heap_;
    };
  };

  const Label* FindBase(std::string_view name) const;
  // memcpy for the short strings labels mostly are: overlapping word moves, no call.
  static void CopyBytes(char* dst, const char* src, size_t n) {
    if (n >= 8) {
      if (n > 16) {
        std::memcpy(dst, src, n);
        return;
      }
      uint64_t a, b;
      std::memcpy(&a, src, 8);
      std::memcpy(&b, src + n - 8, 8);
      std::memcpy(dst, &a, 8);
      std::memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      std::memcpy(&a, src, 4);
      std::memcpy(&b, src + n - 4, 4);
      std::memcpy(dst, &a, 4);
      std::memcpy(dst + n - 4, &b, 4);
    } else {
      for (size_t i = 0; i < n; ++i) dst[i] = src[i];
    }
  }

  std::shared_ptr<const Base> base_;  // sorted by name, unique names
  Edits edits_;                       // override base
};

template <typename F>
void LabelSet::ForEach(F&& f) const {
  // Edits are kept in the order they were made; visit them in name order.
  Edits::Record small[16];
  std::vector<Edits::Record> big;
  size_t en = 0;
  edits_.Visit([&](const Edits::Record& r) {
    if (en < 16) {
      small[en] = r;
    } else {
      if (big.empty()) big.assign(small, small + 16);
      big.push_back(r);
    }
    ++en;
    return true;
  });
  Edits::Record* edits = big.empty() ? small : big.data();
  if (en <= 16) {
    for (size_t i = 1; i < en; ++i) {
      const Edits::Record r = edits[i];
      size_t j = i;
      while (j > 0 && edits[j - 1].name > r.name) {
        edits[j] = edits[j - 1];
        --j;
      }
      edits[j] = r;
    }
  } else {
    std::sort(edits, edits + en,
              [](const Edits::Record& a, const Edits::Record& b) { return a.name < b.name; });
  }
  size_t bi = 0, ei = 0;
  const size_t bn = base_ ? base_->size() : 0;
  while (bi < bn || ei < en) {
    // Compared as views: clang 14 rejects std::string < std::string_view (libstdc++ 12's <=>).
    if (ei == en || (bi < bn && std::string_view((*base_)[bi].name) < edits[ei].name)) {
      f(std::string_view((*base_)[bi].name), std::string_view((*base_)[bi].value));
      ++bi;
      continue;
    }
    const Edits::Record& e = edits[ei++];
    if (bi < bn && (*base_)[bi].name == e.name) ++bi;
    if (!e.erased) f(e.name, e.value);
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
    str_.clear();  // then append: lighter than assign's general replace
    str_.append(s.data(), s.size());
  }
  // Returns the string buffer to fill (already cleared); the value becomes a string.
  std::string& MutableString() {
    kind_ = Kind::kString;
    str_.clear();
    return str_;
  }
  void SetDouble(double d) {
    kind_ = Kind::kNumber;
    is_int_ = false;
    formatted_ = false;
    double_ = d;
  }
  // An integral number kept exact (e.g. a nanosecond timestamp that a double would round).
  void SetInt(int64_t i) {
    kind_ = Kind::kNumber;
    is_int_ = true;
    formatted_ = false;
    int_ = i;
  }
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
  std::optional<std::string_view> AsString() const {
    if (kind_ == Kind::kString) return std::string_view(str_);
    return AsStringSlow();
  }

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
  std::optional<std::string_view> AsStringSlow() const;

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

// The extracted map: key -> Value.
//
// The entry's initial labels are part of the map from the start (STAGES.md: every label is
// copied into extracted as a string before the first stage) but are copied into a slot only
// when a stage reads or writes that key, so a stage list that never looks at them pays nothing.
// A view returned by AsString() of one value may be invalidated by the next Find/Upsert of an
// other key (a slot may be added); call MaterializeAll() first to hold several views at once.
//
// Built for reuse: the pipeline hands one map from entry to entry, and Reset() keeps every key
// it has seen in its slot (with its buffers), marking the slot not set on this entry. A key the
// stages set again on the next entry finds its slot where it was, and the stages remember that
// place (the Hinted calls), so a recycled map fills without hashing or allocating. The storage
// is one pointer: an Entry moves cheaply, and carries none once it has left the pipeline.
class Extracted {
 public:
  Extracted() = default;
  Extracted(const Extracted& o) : impl_(Copy(o)) {}
  Extracted& operator=(const Extracted& o) {
    if (this != &o) impl_ = Copy(o);
    return *this;
  }
  Extracted(Extracted&&) noexcept = default;
  Extracted& operator=(Extracted&&) noexcept = default;

  // Empties the map, then makes `labels` (sorted, as LabelSet keeps them) its initial content.
  void Reset(std::shared_ptr<const std::vector<Label>> labels);
  void Clear() {
    if (impl_) Reset(nullptr);
  }

  Value* Find(std::string_view key) {
    size_t hint = kNoHint;
    return FindHinted(key, hint);
  }
  const Value* Find(std::string_view key) const { return const_cast<Extracted*>(this)->Find(key); }
  // Find that tries slot `hint` first (stages remember where their keys were on the last line;
  // lines of one stream usually have the same layout). Sets hint to the slot used, or to
  // kNoHint when the key is absent.
  Value* FindHinted(std::string_view key, size_t& hint) {
    if (impl_ && hint < impl_->slots.size()) {
      Slot& s = impl_->slots[hint];
      if (s.generation == impl_->generation && KeyEquals(s.key, key)) {
        return s.erased ? nullptr : &s.value;
      }
    }
    return FindSlow(key, hint);
  }
  // The slot for key (created null if absent, else its current value kept); assign through it.
  Value& Upsert(std::string_view key) {
    size_t hint = kNoHint;
    return UpsertHinted(key, hint);
  }
  void SetString(std::string_view key, std::string_view v) { Upsert(key).SetString(v); }
  // Upsert that tries slot `hint` first; sets hint to the slot used.
  Value& UpsertHinted(std::string_view key, size_t& hint) {
    if (impl_ && hint < impl_->slots.size()) {
      Slot& s = impl_->slots[hint];
      // Not yet set on this entry, and not a label: the common case of a recycled map.
      if (s.generation != impl_->generation && s.label < 0 && s.label_epoch == impl_->label_epoch &&
          KeyEquals(s.key, key)) {
        s.generation = impl_->generation;
        s.erased = false;
        s.value.SetNull();
        return s.value;
      }
    }
    return UpsertSlow(key, hint);
  }
  void Erase(std::string_view key);

  // Where keys are: a slot keeps its key for as long as layout() stays the same (0: no storage
  // yet), and no two maps share a layout. A stage whose hints all came from Hinted calls under
  // one layout may use the At calls while it lasts: they skip comparing the key.
  uint64_t layout() const { return impl_ ? impl_->layout : 0; }
  Value& UpsertAt(size_t slot) {
    Slot& s = impl_->slots[slot];
    if (s.generation != impl_->generation) {
      if (s.label < 0 && s.label_epoch == impl_->label_epoch) {
        s.generation = impl_->generation;
        s.erased = false;
        s.value.SetNull();
        return s.value;
      }
      TouchSlow(s);
    }
    if (s.erased) {
      s.erased = false;
      s.value.SetNull();
    }
    return s.value;
  }
  Value* FindAt(size_t slot) {
    Slot& s = impl_->slots[slot];
    if (s.generation != impl_->generation) {
      if (LabelOf(s) < 0) return nullptr;
      TouchSlow(s);
    }
    return s.erased ? nullptr : &s.value;
  }

  // Copies every initial label into its slot, so that views stay valid across lookups.
  void MaterializeAll();

  bool has_storage() const { return impl_ != nullptr; }

  // Calls f(key, value) for every key (labels included), in no particular order.
  template <typename F>
  void ForEach(F&& f) const {
    if (!impl_) return;
    const_cast<Extracted*>(this)->MaterializeAll();
    for (const Slot& s : impl_->slots) {
      if (s.generation == impl_->generation && !s.erased) f(std::string_view(s.key), s.value);
    }
  }

  static constexpr size_t kNoHint = ~size_t{0};

 private:
  struct Slot {
    std::string key;
    uint64_t head = 0;  // KeyHead(key): compared before the bytes
    Value value;
    uint32_t generation = 0;   // the slot is set on the entry of this generation
    bool erased = false;       // set, but erased (hides a label of the same name)
    int32_t label = -1;        // index of the initial label of this name, or -1...
    uint32_t label_epoch = 0;  // ...when equal to Impl::label_epoch
  };
  struct Impl {
    std::vector<Slot> slots;      // every key seen since the map was made (bounded)
    std::vector<uint32_t> index;  // open addressing by head: slot + 1, or 0 when free
    uint32_t generation = 1;
    std::shared_ptr<const std::vector<Label>> labels;
    // Heads of the label names of labels_for (held, so that its address is not reused), and
    // a bit per head bucket: a quick "not a label".
    std::shared_ptr<const std::vector<Label>> labels_for;
    std::vector<uint64_t> label_heads;
    uint64_t label_filter = 0;
    uint32_t label_epoch = 1;  // changes with labels_for
    uint64_t layout = NewLayout();
  };
  static uint64_t NewLayout();
  static std::unique_ptr<Impl> Copy(const Extracted& o);
  // Length and a few bytes of a key: equal keys have equal heads; compared before the bytes.
  static uint64_t KeyHead(std::string_view key) {
    const size_t n = key.size();
    if (n == 0) return 0;
    auto byte = [&](size_t i) { return static_cast<uint64_t>(static_cast<uint8_t>(key[i])); };
    return n | byte(0) << 32 | byte(n - 1) << 40 | byte(n >> 1) << 48 | byte(n >> 2) << 56;
  }
  Value* FindSlow(std::string_view key, size_t& hint);
  Value& UpsertSlow(std::string_view key, size_t& hint);
  // Whole-key equality; short keys compare with two overlapping loads, not a call.
  static bool KeyEquals(std::string_view a, std::string_view b) {
    const size_t n = a.size();
    if (n != b.size()) return false;
    const char* x = a.data();
    const char* y = b.data();
    if (n >= 8) {
      if (n > 16) return std::memcmp(x, y, n) == 0;
      uint64_t x0, y0, x1, y1;
      std::memcpy(&x0, x, 8);
      std::memcpy(&y0, y, 8);
      std::memcpy(&x1, x + n - 8, 8);
      std::memcpy(&y1, y + n - 8, 8);
      return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n >= 4) {
      uint32_t x0, y0, x1, y1;
      std::memcpy(&x0, x, 4);
      std::memcpy(&y0, y, 4);
      std::memcpy(&x1, x + n - 4, 4);
      std::memcpy(&y1, y + n - 4, 4);
      return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    return n == 0 || (x[0] == y[0] && x[n >> 1] == y[n >> 1] && x[n - 1] == y[n - 1]);
  }
  // The slot of key (hint first, then the index), or npos; sets hint when found.
  size_t SlotOf(std::string_view key, uint64_t head, size_t& hint) const;
  size_t NewSlot(std::string_view key, uint64_t head);
  // Index of the initial label named like slot s, or -1.
  int32_t LabelOf(Slot& s);
  int32_t LabelOf(std::string_view key, uint64_t head);
  void UpdateLabelHeads();
  // Makes slot i set on this entry (its label's value, or null) unless it is already.
  void Touch(Slot& s) {
    if (s.generation == impl_->generation) return;
    TouchSlow(s);
  }
  void TouchSlow(Slot& s);
  void Grow();

  std::unique_ptr<Impl> impl_;
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
  // The host's tag of where the entry came from (the plugin: the batch of lines it read it
  // in, numbered upwards). Stages keep it; an entry made of several keeps its first's.
  uint64_t origin = 0;
};

// Label names: ^[a-zA-Z_][a-zA-Z0-9_]*$.
bool IsValidLabelName(std::string_view name);
bool IsValidUtf8Slow(std::string_view s);
inline bool IsValidUtf8(std::string_view s) {
  // Short ASCII strings (most label values) take two overlapping word loads.
  const size_t n = s.size();
  const char* p = s.data();
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + n - 8, 8);
    if (((a | b) & 0x8080808080808080ull) == 0) return true;
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    if (((a | b) & 0x80808080u) == 0) return true;
  } else if (n < 4) {
    unsigned char o = 0;
    for (size_t i = 0; i < n; ++i) o |= static_cast<unsigned char>(p[i]);
    if (o < 0x80) return true;
  }
  return IsValidUtf8Slow(s);
}

}  // namespace skald::stages
