// Internal to the Go template engine: the decimal arithmetic of sprig's addf, subf, mulf and
// divf (github.com/shopspring/decimal): operands are the shortest decimal form of each float64,
// sums and products are exact, quotients are rounded half away from zero at 16 decimal places,
// and the result is the float64 nearest the decimal.
#pragma once

#include <string>

namespace skald::stages::go_template_internal {

class Decimal {
 public:
  Decimal() = default;
  // The shortest decimal that reads back as x; NaN and infinities set *error (Go panics).
  static Decimal FromDouble(double x, std::string* error);

  // *this = *this op x for op in + - * /; false with *error on division by zero.
  bool Apply(char op, const Decimal& x, std::string* error);
  double ToDouble() const;
  size_t digits() const { return digits_.size(); }

 private:
  bool negative_ = false;
  std::string digits_ = "0";  // magnitude, most significant first, no leading zeros
  int exp_ = 0;               // value = digits_ * 10^exp_
};

}  // namespace skald::stages::go_template_internal
