#include "pipeline_stages/go_template/go_template_decimal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace skald::stages::go_template_internal {

namespace {

void TrimLeadingZeros(std::string* d) {
  const size_t nz = d->find_first_not_of('0');
  if (nz == std::string::npos) {
    *d = "0";
  } else {
    d->erase(0, nz);
  }
}

int CompareMagnitude(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

std::string AddMagnitude(const std::string& a, const std::string& b) {
  std::string out;
  int carry = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
    int s = carry;
    if (i < a.size()) s += a[a.size() - 1 - i] - '0';
    if (i < b.size()) s += b[b.size() - 1 - i] - '0';
    out.push_back(static_cast<char>('0' + s % 10));
    carry = s / 10;
  }
  std::reverse(out.begin(), out.end());
  TrimLeadingZeros(&out);
  return out;
}

// a - b for a >= b.
std::string SubMagnitude(const std::string& a, const std::string& b) {
  std::string out;
  int borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int s = (a[a.size() - 1 - i] - '0') - borrow;
    if (i < b.size()) s -= b[b.size() - 1 - i] - '0';
    borrow = s < 0;
    if (s < 0) s += 10;
    out.push_back(static_cast<char>('0' + s));
  }
  std::reverse(out.begin(), out.end());
  TrimLeadingZeros(&out);
  return out;
}

std::string MulMagnitude(const std::string& a, const std::string& b) {
  std::vector<int> acc(a.size() + b.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < b.size(); ++j) {
      acc[i + j + 1] += (a[i] - '0') * (b[j] - '0');
    }
  }
  for (size_t k = acc.size() - 1; k > 0; --k) {
    acc[k - 1] += acc[k] / 10;
    acc[k] %= 10;
  }
  std::string out;
  for (int d : acc) out.push_back(static_cast<char>('0' + d));
  TrimLeadingZeros(&out);
  return out;
}

// Integer division of magnitudes: quotient, and the remainder in *rem.
std::string DivMagnitude(const std::string& a, const std::string& b, std::string* rem) {
  std::string q, r = "0";
  for (char c : a) {
    r = r == "0" ? std::string(1, c) : r + c;
    TrimLeadingZeros(&r);
    int digit = 0;
    while (CompareMagnitude(r, b) >= 0) {
      r = SubMagnitude(r, b);
      ++digit;
    }
    q.push_back(static_cast<char>('0' + digit));
  }
  TrimLeadingZeros(&q);
  *rem = r;
  return q;
}

}  // namespace

Decimal Decimal::FromDouble(double x, std::string* error) {
  Decimal d;
  if (std::isnan(x) || std::isinf(x)) {
    *error = std::string("Cannot create a Decimal from ") + (std::isnan(x) ? "NaN"
                                                             : x > 0       ? "+Inf"
                                                                           : "-Inf");
    return d;
  }
  if (x == 0) return d;
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), std::fabs(x), std::chars_format::scientific);
  const std::string_view text(buf, r.ptr - buf);
  const size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exp = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+'), text.data() + text.size(), exp);
  d.negative_ = x < 0;
  d.exp_ = exp - static_cast<int>(digits.size()) + 1;
  d.digits_ = digits;
  TrimLeadingZeros(&d.digits_);
  return d;
}

bool Decimal::Apply(char op, const Decimal& x, std::string* error) {
  if (op == '*') {
    digits_ = MulMagnitude(digits_, x.digits_);
    exp_ += x.exp_;
    negative_ = negative_ != x.negative_ && digits_ != "0";
    return true;
  }
  if (op == '/') {
    if (x.digits_ == "0") {
      *error = "decimal division by 0";
      return false;
    }
    // q = trunc(this / x) with 16 decimal places; the remainder decides the rounding.
    constexpr int kPrecision = 16;
    // this / x = (a * 10^ea) / (b * 10^eb); scale a so the quotient has exponent -kPrecision.
    std::string a = digits_, b = x.digits_;
    const int shift = exp_ - x.exp_ + kPrecision;
    if (shift >= 0) {
      a.append(static_cast<size_t>(shift), '0');
    } else {
      b.append(static_cast<size_t>(-shift), '0');
    }
    std::string rem;
    std::string q = DivMagnitude(a, b, &rem);
    // Round half away from zero: 2 * rem >= b.
    if (CompareMagnitude(AddMagnitude(rem, rem), b) >= 0) q = AddMagnitude(q, "1");
    negative_ = negative_ != x.negative_ && q != "0";
    digits_ = q;
    exp_ = -kPrecision;
    return true;
  }
  // + and -: align the exponents.
  Decimal y = x;
  if (op == '-') y.negative_ = !y.negative_;
  std::string a = digits_, b = y.digits_;
  const int exp = std::min(exp_, y.exp_);
  if (a != "0") a.append(static_cast<size_t>(exp_ - exp), '0');
  if (b != "0") b.append(static_cast<size_t>(y.exp_ - exp), '0');
  if (negative_ == y.negative_) {
    digits_ = AddMagnitude(a, b);
  } else if (CompareMagnitude(a, b) >= 0) {
    digits_ = SubMagnitude(a, b);
  } else {
    digits_ = SubMagnitude(b, a);
    negative_ = y.negative_;
  }
  exp_ = exp;
  if (digits_ == "0") negative_ = false;
  return true;
}

double Decimal::ToDouble() const {
  const std::string text = (negative_ ? "-" : "") + digits_ + "e" + std::to_string(exp_);
  return std::strtod(text.c_str(), nullptr);
}

}  // namespace skald::stages::go_template_internal
