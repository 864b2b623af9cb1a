#include "pipeline_stages/jmespath_expression.h"

#include "pipeline_stages/jmespath_ast.h"
#include "pipeline_stages/jmespath_functions.h"
#include "pipeline_stages/jmespath_lexer.h"
#include "pipeline_stages/jmespath_parser.h"

namespace skald::stages {
namespace {

using json = nlohmann::json;
using jmes::Node;

const json& Null() {
  static const json null;
  return null;
}

// A result: a reference into the input, the expression's literals or Null(), or a value of
// its own.
class Val {
 public:
  Val() = default;
  static Val Ref(const json& j) {
    Val v;
    v.ref_ = &j;
    return v;
  }
  static Val Own(json j) {
    Val v;
    v.ref_ = nullptr;
    v.own_ = std::move(j);
    return v;
  }
  const json& get() const { return ref_ ? *ref_ : own_; }
  bool owned() const { return ref_ == nullptr; }
  json Take() && { return ref_ ? *ref_ : std::move(own_); }

 private:
  const json* ref_ = &Null();
  json own_;
};

// The work one Search may do, in units of about 16 bytes of memory: one per node evaluated, and
// for every value copied or made, one per scalar, four per array or object, one per 16 bytes of
// string. A search may spend a fixed allowance plus eight times what its document holds: far
// more than any projection, filter or function over the line needs, while a config that
// multiplies the line ([@, @] | [@, @] | ... doubles it at every pipe: forty pipes are a
// terabyte) stops there, as at a run-time error, having held a few megabytes at most.
constexpr int64_t kBaseWork = 65'536;
constexpr int64_t kWorkPerDocumentUnit = 8;

// Calls `pay(units)` for `v`'s node and then, depth first, for each key and element: the
// budget's cost model, in one place for measuring a document and for charging a value (whose
// `pay` throws to stop the walk once the budget is spent).
template <typename Pay>
void WalkUnits(const json& v, const Pay& pay) {
  if (v.is_string()) {
    pay(1 + static_cast<int64_t>(v.get_ref<const std::string&>().size() / 16));
  } else if (v.is_object()) {
    pay(4);
    for (const auto& [key, e] : v.items()) {
      pay(static_cast<int64_t>(key.size() / 16));
      WalkUnits(e, pay);
    }
  } else if (v.is_array()) {
    pay(4);
    for (const json& e : v) WalkUnits(e, pay);
  } else {
    pay(1);
  }
}

int64_t Units(const json& v) {
  int64_t units = 0;
  WalkUnits(v, [&units](int64_t n) { units += n; });
  return units;
}

struct WorkLimitReached {};

class Interpreter final : public jmes::Evaluator {
 public:
  explicit Interpreter(int64_t work) : work_left_(work) {}

  json Apply(const Node& expression, const json& value) const override {
    return Take(Eval(expression, value));
  }

  void Pay(std::size_t bytes) const override { Spend(static_cast<int64_t>(bytes / 16)); }

  Val Eval(const Node& n, const json& in) const {
    Spend(1);
    Val v = EvalNode(n, in);
    if (v.owned()) Charge(v.get());
    return v;
  }

 private:
  void Spend(int64_t units) const {
    work_left_ -= units;
    if (work_left_ < 0) throw WorkLimitReached{};
  }

  // Spends what a value holds, walking it no further than the budget allows.
  void Charge(const json& v) const {
    WalkUnits(v, [this](int64_t units) { Spend(units); });
  }

  // A result as a value of its own: what it refers to is paid for before it is copied.
  json Take(Val v) const {
    if (!v.owned()) Charge(v.get());
    return std::move(v).Take();
  }

  Val EvalNode(const Node& n, const json& in) const {
    switch (n.kind) {
      case Node::Kind::kCurrent:
        return Val::Ref(in);
      case Node::Kind::kField: {
        if (!in.is_object()) return {};
        auto it = in.find(n.name);
        return it == in.end() ? Val() : Val::Ref(*it);
      }
      case Node::Kind::kIndex: {
        if (!in.is_array()) return {};
        const auto size = static_cast<int64_t>(in.size());
        const int64_t i = n.index < 0 ? n.index + size : n.index;
        if (i < 0 || i >= size) return {};
        return Val::Ref(in[static_cast<size_t>(i)]);
      }
      case Node::Kind::kSlice:
        return in.is_array() ? Val::Own(Slice(n, in)) : Val();
      case Node::Kind::kSubexpression:
      case Node::Kind::kPipe:
        return Chain(n.children[1], Eval(n.children[0], in));
      case Node::Kind::kProjection: {
        const Val left = Eval(n.children[0], in);
        return left.get().is_array() ? Project(left.get(), n.children[1]) : Val();
      }
      case Node::Kind::kValueProjection: {
        const Val left = Quiet(n.children[0], in);
        return left.get().is_object() ? Project(left.get(), n.children[1]) : Val();
      }
      case Node::Kind::kFlatten: {
        const Val left = Quiet(n.children[0], in);
        if (!left.get().is_array()) return {};
        json out = json::array();
        for (const json& e : left.get()) {
          if (e.is_array()) {
            for (const json& x : e) out.push_back(x);
          } else {
            out.push_back(e);
          }
        }
        return Val::Own(std::move(out));
      }
      case Node::Kind::kFilterProjection: {
        const Val left = Quiet(n.children[0], in);
        if (!left.get().is_array()) return {};
        json out = json::array();
        for (const json& e : left.get()) {
          if (!jmes::IsTruthy(Eval(n.children[2], e).get())) continue;
          Val r = Eval(n.children[1], e);
          if (!r.get().is_null()) out.push_back(Take(std::move(r)));
        }
        return Val::Own(std::move(out));
      }
      case Node::Kind::kLiteral:
        return Val::Ref(n.literal);
      case Node::Kind::kMultiSelectList: {
        if (in.is_null()) return {};
        json out = json::array();
        for (const Node& c : n.children) out.push_back(Take(Eval(c, in)));
        return Val::Own(std::move(out));
      }
      case Node::Kind::kMultiSelectHash: {
        if (in.is_null()) return {};
        json out = json::object();
        for (size_t i = 0; i < n.children.size(); ++i) {
          out[n.keys[i]] = Take(Eval(n.children[i], in));
        }
        return Val::Own(std::move(out));
      }
      case Node::Kind::kOr: {
        Val left = Eval(n.children[0], in);
        if (jmes::IsTruthy(left.get())) return left;
        return Eval(n.children[1], in);
      }
      case Node::Kind::kAnd: {
        Val left = Eval(n.children[0], in);
        if (!jmes::IsTruthy(left.get())) return left;
        return Eval(n.children[1], in);
      }
      case Node::Kind::kNot:
        return Val::Own(!jmes::IsTruthy(Eval(n.children[0], in).get()));
      case Node::Kind::kComparator:
        return Compare(n, Eval(n.children[0], in).get(), Eval(n.children[1], in).get());
      case Node::Kind::kFunction: {
        std::vector<Val> values(n.children.size());
        std::vector<jmes::Arg> args(n.children.size());
        for (size_t i = 0; i < n.children.size(); ++i) {
          const Node& c = n.children[i];
          if (c.kind == Node::Kind::kExpressionReference) {
            args[i].expression = &c.children[0];
          } else {
            values[i] = Eval(c, in);
            args[i].value = &values[i].get();
          }
        }
        return Val::Own(jmes::CallFunction(*n.function, *this, args));
      }
      case Node::Kind::kExpressionReference:
        throw jmes::RuntimeError("an expression reference (&) is only a function's argument");
    }
    return {};
  }

  // `rhs` on every element (or member's value) of `left`; the nulls are left out.
  Val Project(const json& left, const Node& rhs) const {
    json out = json::array();
    for (const json& e : left) {
      Val r = Eval(rhs, e);
      if (!r.get().is_null()) out.push_back(Take(std::move(r)));
    }
    return Val::Own(std::move(out));
  }

  // rhs on left's result; what refers into a result of its own is copied before it goes.
  Val Chain(const Node& rhs, Val left) const {
    Val r = Eval(rhs, left.get());
    if (left.owned() && !r.owned()) return Val::Own(r.get());
    return r;
  }

  // go-jmespath ignores errors on the left of a filter, a flatten and an object projection.
  Val Quiet(const Node& n, const json& in) const {
    try {
      return Eval(n, in);
    } catch (const jmes::RuntimeError&) {
      return {};
    }
  }

  static Val Compare(const Node& n, const json& a, const json& b) {
    switch (n.comparator) {
      case jmes::Comparator::kEq:
        return Val::Own(a == b);
      case jmes::Comparator::kNe:
        return Val::Own(a != b);
      default:
        break;
    }
    if (!a.is_number() || !b.is_number()) return {};
    const double x = a.get<double>();
    const double y = b.get<double>();
    switch (n.comparator) {
      case jmes::Comparator::kLt:
        return Val::Own(x < y);
      case jmes::Comparator::kLte:
        return Val::Own(x <= y);
      case jmes::Comparator::kGt:
        return Val::Own(x > y);
      default:
        return Val::Own(x >= y);
    }
  }

  mutable int64_t work_left_;

  // go-jmespath's slice bounds: missing ones from the step's direction, the rest clamped.
  static json Slice(const Node& n, const json& in) {
    const auto length = static_cast<int64_t>(in.size());
    const int64_t step = n.slice[2].value_or(1);
    auto clamp = [&](int64_t v) {
      if (v < 0) {
        v += length;
        if (v < 0) v = step < 0 ? -1 : 0;
      } else if (v >= length) {
        v = step < 0 ? length - 1 : length;
      }
      return v;
    };
    const int64_t start = n.slice[0] ? clamp(*n.slice[0]) : step < 0 ? length - 1 : 0;
    const int64_t stop = n.slice[1] ? clamp(*n.slice[1]) : step < 0 ? -1 : length;
    json out = json::array();
    if (step > 0) {
      for (int64_t i = start; i < stop; i += step) {
        out.push_back(in[static_cast<size_t>(i)]);
        if (step >= stop - i) break;  // no overflow past the end
      }
    } else {
      for (int64_t i = start; i > stop; i += step) out.push_back(in[static_cast<size_t>(i)]);
    }
    return out;
  }
};

}  // namespace

JmesExpression::JmesExpression(std::string_view expression)
    : root_(std::make_shared<const jmes::Node>(jmes::Parse(expression))) {}

std::optional<json> JmesExpression::Search(const json& document) const {
  try {
    const Interpreter interpreter(kBaseWork + kWorkPerDocumentUnit * Units(document));
    return interpreter.Apply(*root_, document);
  } catch (const jmes::RuntimeError&) {
    return std::nullopt;
  } catch (const WorkLimitReached&) {
    return std::nullopt;
  }
}

void JmesNumbersToDoubles(json& value) { jmes::NumbersToDoubles(value); }

}  // namespace skald::stages
