#include "pipeline_stages/entry.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "pipeline_stages/go/go_string.h"

namespace skald::stages {

LabelSet::LabelSet(std::initializer_list<std::pair<std::string_view, std::string_view>> labels) {
  std::vector<Label> v;
  v.reserve(labels.size());
  for (const auto& [n, val] : labels) v.push_back(Label{std::string(n), std::string(val)});
  *this = FromVector(std::move(v));
}

LabelSet LabelSet::FromVector(std::vector<Label> labels) {
  std::stable_sort(labels.begin(), labels.end(),
                   [](const Label& a, const Label& b) { return a.name < b.name; });
  // Keep the last of equal names.
  std::vector<Label> unique;
  unique.reserve(labels.size());
  for (auto& l : labels) {
    if (!unique.empty() && unique.back().name == l.name) {
      unique.back().value = std::move(l.value);
    } else {
      unique.push_back(std::move(l));
    }
  }
  LabelSet s;
  if (!unique.empty()) s.base_ = std::make_shared<const Base>(std::move(unique));
  return s;
}

const Label* LabelSet::FindBase(std::string_view name) const {
  if (!base_) return nullptr;
  auto it = std::lower_bound(base_->begin(), base_->end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
  if (it != base_->end() && it->name == name) return &*it;
  return nullptr;
}

void LabelSet::Edits::TooLong() { throw std::length_error("LabelSet: label value too long"); }

void LabelSet::Edits::Reserve(size_t n) {
  if (n > 0xFFFFFFFFu) throw std::length_error("LabelSet: labels too long");
  if (n <= cap_) return;
  const size_t cap = std::min<size_t>(std::max<size_t>(n, size_t{cap_} * 2), 0xFFFFFFFFu);
  char* heap = new char[cap];
  std::memcpy(heap, data(), size_);
  if (cap_ > kInline) delete[] heap_;
  heap_ = heap;
  cap_ = static_cast<uint32_t>(cap);
}

void LabelSet::Edits::Assign(const char* d, uint32_t n) {
  Reserve(n);
  std::memmove(data(), d, n);
  size_ = n;
}

void LabelSet::Edits::Remove(const Record& r) {
  char* d = data();
  std::memmove(d + r.offset, d + r.offset + r.size, size_ - r.offset - r.size);
  size_ -= r.size;
}

std::optional<std::string_view> LabelSet::Get(std::string_view name) const {
  if (auto r = edits_.Find(name)) {
    if (r->erased) return std::nullopt;
    return r->value;
  }
  if (const Label* l = FindBase(name)) return std::string_view(l->value);
  return std::nullopt;
}

void LabelSet::Set(std::string_view name, std::string_view value) {
  auto r = edits_.Find(name);
  if (r && !r->erased && r->value.size() == value.size()) {
    std::memmove(const_cast<char*>(r->value.data()), value.data(), value.size());
    return;
  }
  if (r) {
    // The new value may be a view of the buffer that changes.
    const std::string keep_name(name), keep_value(value);
    edits_.Remove(*r);
    edits_.Append(keep_name, keep_value, false);
    return;
  }
  edits_.Append(name, value, false);
}

void LabelSet::Erase(std::string_view name) {
  const bool in_base = FindBase(name) != nullptr;
  if (auto r = edits_.Find(name)) {
    const std::string keep_name(name);
    edits_.Remove(*r);
    if (in_base) edits_.Append(keep_name, std::string_view(), true);
    return;
  }
  if (in_base) edits_.Append(name, std::string_view(), true);
}

void LabelSet::Clear() {
  base_.reset();
  edits_.clear();
}

size_t LabelSet::size() const {
  size_t n = 0;
  ForEach([&](std::string_view, std::string_view) { ++n; });
  return n;
}

std::vector<Label> LabelSet::ToVector() const {
  std::vector<Label> v;
  ForEach([&](std::string_view n, std::string_view val) {
    v.push_back(Label{std::string(n), std::string(val)});
  });
  return v;
}

std::string LabelSet::ToString() const {
  std::string s = "{";
  bool first = true;
  ForEach([&](std::string_view n, std::string_view v) {
    if (!first) s += ", ";
    first = false;
    s.append(n);
    s.push_back('=');
    AppendGoQuoted(v, &s);
  });
  s.push_back('}');
  return s;
}

void LabelSet::Compact() {
  if (edits_.empty()) return;
  std::vector<Label> v = ToVector();
  edits_.clear();
  base_.reset();
  if (!v.empty()) base_ = std::make_shared<const Base>(std::move(v));
}

bool operator==(const LabelSet& a, const LabelSet& b) { return a.ToVector() == b.ToVector(); }

uint64_t LabelSet::Hash() const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  ForEach([&](std::string_view n, std::string_view v) {
    mix(n);
    mix(v);
  });
  return h;
}

void AppendNumber(double d, std::string& out) {
  if (std::isnan(d)) {
    out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "+Inf" : "-Inf";
    return;
  }
  AppendGoFloat(d, 'f', &out);  // as Go's strconv.FormatFloat(d, 'f', -1, 64)
}

std::optional<std::string_view> Value::AsStringSlow() const {
  switch (kind_) {
    case Kind::kString:
      return std::string_view(str_);
    case Kind::kBool:
      return bool_ ? std::string_view("true") : std::string_view("false");
    case Kind::kNumber:
      if (!formatted_) {
        str_.clear();
        if (is_int_) {
          // Digits from the end, two at a time.
          static constexpr char kPairs[] =
              "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
              "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
              "8081828384858687888990919293949596979899";
          char buf[24];
          char* p = buf + sizeof buf;
          uint64_t u = int_ < 0 ? 0 - static_cast<uint64_t>(int_) : static_cast<uint64_t>(int_);
          while (u >= 100) {
            const size_t pair = static_cast<size_t>(u % 100) * 2;
            u /= 100;
            *--p = kPairs[pair + 1];
            *--p = kPairs[pair];
          }
          if (u >= 10) {
            *--p = kPairs[u * 2 + 1];
            *--p = kPairs[u * 2];
          } else {
            *--p = static_cast<char>('0' + u);
          }
          if (int_ < 0) *--p = '-';
          str_.append(p, static_cast<size_t>(buf + sizeof buf - p));
        } else {
          AppendNumber(double_, str_);
        }
        formatted_ = true;
      }
      return std::string_view(str_);
    case Kind::kNull:
      break;
  }
  return std::nullopt;
}

bool operator==(const Value& a, const Value& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Value::Kind::kNull:
      return true;
    case Value::Kind::kBool:
      return a.bool_ == b.bool_;
    case Value::Kind::kString:
      return a.str_ == b.str_;
    case Value::Kind::kNumber:
      return a.number() == b.number();
  }
  return false;
}

namespace {
// Called when heads are equal (so are the lengths, and bytes 0, n/4, n/2 and n-1: a key of up
// to 4 bytes is then equal). Short keys compare with two overlapping loads, not a call.
inline bool TailEqual(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n <= 4) return true;
  if (n <= 8) {
    uint32_t x0, y0, x1, y1;
    std::memcpy(&x0, a.data(), 4);
    std::memcpy(&y0, b.data(), 4);
    std::memcpy(&x1, a.data() + n - 4, 4);
    std::memcpy(&y1, b.data() + n - 4, 4);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  if (n <= 16) {
    uint64_t x0, y0, x1, y1;
    std::memcpy(&x0, a.data(), 8);
    std::memcpy(&y0, b.data(), 8);
    std::memcpy(&x1, a.data() + n - 8, 8);
    std::memcpy(&y1, b.data() + n - 8, 8);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  return std::memcmp(a.data(), b.data(), n) == 0;
}

inline size_t HashHead(uint64_t head) { return (head * 0x9E3779B97F4A7C15ull) >> 32; }
inline uint64_t FilterBit(uint64_t head) {
  return uint64_t{1} << ((head * 0x9E3779B97F4A7C15ull) >> 58);
}

// A map that has seen this many keys forgets them all at the next Reset.
constexpr size_t kMaxSlots = 1024;
}  // namespace

uint64_t Extracted::NewLayout() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

std::unique_ptr<Extracted::Impl> Extracted::Copy(const Extracted& o) {
  if (!o.impl_) return nullptr;
  auto impl = std::make_unique<Impl>(*o.impl_);
  impl->layout = NewLayout();  // the copies will add different keys
  return impl;
}

void Extracted::Reset(std::shared_ptr<const std::vector<Label>> labels) {
  if (!impl_) impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.labels = std::move(labels);
  if (m.labels_for != m.labels) UpdateLabelHeads();
  if (m.slots.size() > kMaxSlots) {
    m.slots.clear();
    m.index.clear();
    m.layout = NewLayout();
  }
  if (++m.generation == 0) {  // wrapped: forget every stamp
    for (Slot& s : m.slots) s.generation = 0;
    m.generation = 1;
  }
}

size_t Extracted::SlotOf(std::string_view key, uint64_t head, size_t& hint) const {
  const Impl& m = *impl_;
  if (hint < m.slots.size()) {
    const Slot& s = m.slots[hint];
    if (s.head == head && TailEqual(s.key, key)) return hint;
  }
  if (m.index.empty()) return std::string::npos;
  const size_t mask = m.index.size() - 1;
  for (size_t b = HashHead(head) & mask;; b = (b + 1) & mask) {
    const uint32_t e = m.index[b];
    if (e == 0) return std::string::npos;
    const Slot& s = m.slots[e - 1];
    if (s.head == head && TailEqual(s.key, key)) return hint = e - 1;
  }
}

void Extracted::Grow() {
  Impl& m = *impl_;
  m.index.assign(std::max<size_t>(32, m.index.size() * 2), 0);
  const size_t mask = m.index.size() - 1;
  for (size_t i = 0; i < m.slots.size(); ++i) {
    size_t b = HashHead(m.slots[i].head) & mask;
    while (m.index[b] != 0) b = (b + 1) & mask;
    m.index[b] = static_cast<uint32_t>(i + 1);
  }
}

size_t Extracted::NewSlot(std::string_view key, uint64_t head) {
  Impl& m = *impl_;
  const size_t i = m.slots.size();
  m.slots.emplace_back();
  Slot& s = m.slots.back();
  s.key.assign(key.data(), key.size());
  s.head = head;
  if (m.index.size() < 2 * m.slots.size()) {
    Grow();
  } else {
    const size_t mask = m.index.size() - 1;
    size_t b = HashHead(head) & mask;
    while (m.index[b] != 0) b = (b + 1) & mask;
    m.index[b] = static_cast<uint32_t>(i + 1);
  }
  return i;
}

void Extracted::UpdateLabelHeads() {
  Impl& m = *impl_;
  m.labels_for = m.labels;
  m.label_heads.clear();
  m.label_filter = 0;
  if (m.labels) {
    for (const Label& l : *m.labels) {
      const uint64_t head = KeyHead(l.name);
      m.label_heads.push_back(head);
      m.label_filter |= FilterBit(head);
    }
  }
  if (++m.label_epoch == 0) {
    for (Slot& s : m.slots) s.label_epoch = 0;
    m.label_epoch = 1;
  }
}

int32_t Extracted::LabelOf(std::string_view key, uint64_t head) {
  Impl& m = *impl_;
  if (m.labels_for != m.labels) UpdateLabelHeads();
  if (!(m.label_filter & FilterBit(head))) return -1;
  for (size_t i = 0; i < m.label_heads.size(); ++i) {
    if (m.label_heads[i] == head && TailEqual((*m.labels)[i].name, key)) {
      return static_cast<int32_t>(i);
    }
  }
  return -1;
}

int32_t Extracted::LabelOf(Slot& s) {
  Impl& m = *impl_;
  if (m.labels_for != m.labels) UpdateLabelHeads();
  if (s.label_epoch != m.label_epoch) {
    s.label = LabelOf(s.key, s.head);
    s.label_epoch = m.label_epoch;
  }
  return s.label;
}

void Extracted::TouchSlow(Slot& s) {
  s.generation = impl_->generation;
  s.erased = false;
  const int32_t l = LabelOf(s);
  if (l >= 0) {
    s.value.SetString((*impl_->labels)[static_cast<size_t>(l)].value);
  } else {
    s.value.SetNull();
  }
}

Value* Extracted::FindSlow(std::string_view key, size_t& hint) {
  if (!impl_) {
    hint = kNoHint;
    return nullptr;
  }
  const uint64_t head = KeyHead(key);
  size_t i = SlotOf(key, head, hint);
  if (i == std::string::npos) {
    if (LabelOf(key, head) < 0) {
      hint = kNoHint;
      return nullptr;
    }
    hint = i = NewSlot(key, head);
  }
  Slot& s = impl_->slots[i];
  if (s.generation != impl_->generation) {
    if (LabelOf(s) < 0) return nullptr;
    TouchSlow(s);
  }
  return s.erased ? nullptr : &s.value;
}

Value& Extracted::UpsertSlow(std::string_view key, size_t& hint) {
  if (!impl_) impl_ = std::make_unique<Impl>();
  const uint64_t head = KeyHead(key);
  size_t i = SlotOf(key, head, hint);
  if (i == std::string::npos) hint = i = NewSlot(key, head);
  Slot& s = impl_->slots[i];
  Touch(s);
  if (s.erased) {
    s.erased = false;
    s.value.SetNull();
  }
  return s.value;
}

void Extracted::Erase(std::string_view key) {
  if (!impl_) return;
  const uint64_t head = KeyHead(key);
  size_t hint = kNoHint;
  size_t i = SlotOf(key, head, hint);
  if (i == std::string::npos) {
    if (LabelOf(key, head) < 0) return;
    i = NewSlot(key, head);
  }
  Slot& s = impl_->slots[i];
  Touch(s);
  s.erased = true;
}

void Extracted::MaterializeAll() {
  if (!impl_ || !impl_->labels) return;
  for (const Label& l : *impl_->labels) {
    size_t hint = kNoHint;
    FindHinted(l.name, hint);
  }
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!(alpha || (i > 0 && c >= '0' && c <= '9'))) return false;
  }
  return true;
}

bool IsValidUtf8Slow(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i + 8 <= n) {  // ASCII fast path
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (w & 0x8080808080808080ull) break;
    i += 8;
  }
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (int k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace skald::stages
