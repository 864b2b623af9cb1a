#include "pipeline_stages/json_stage.h"

#include <algorithm>
#include <cstring>

namespace skald::stages {

namespace od = simdjson::ondemand;

JsonStage::JsonStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx, {"expressions", "source", "drop_malformed"});
  YAML::Node exprs = c.Get("expressions");
  if (!exprs || !exprs.IsMap() || exprs.size() == 0) {
    c.Fail("expressions",
           "is required: a map of extracted key to JMESPath expression, e.g. {level: level}, got " +
               DescribeNode(exprs));
  }
  for (const auto& kv : exprs) {
    Expression e;
    e.key = kv.first.as<std::string>();
    std::string expr = e.key;
    if (kv.second && !kv.second.IsNull()) {
      if (!kv.second.IsScalar()) {
        ctx.Fail("expression for key " + Quote(e.key) + " must be a string, got " +
                 DescribeNode(kv.second));
      }
      if (!kv.second.Scalar().empty()) expr = kv.second.Scalar();
    }
    try {
      e.path = ParseJmesPath(expr);
    } catch (const ConfigError& err) {
      ctx.Fail("expression " + Quote(expr) + " for key " + Quote(e.key) + ": " + err.what() +
               (expr.find('-') != std::string::npos && expr.find('"') == std::string::npos
                    ? std::string(" (quote keys that contain '-': '\"" + expr + "\"')")
                    : std::string()));
    }
    if (e.path.empty())
      ctx.Fail("expression " + Quote(expr) + " for key " + Quote(e.key) + " is empty");
    expressions_.push_back(std::move(e));
  }
  for (size_t i = 0; i < expressions_.size(); ++i) {
    const JmesPath& p = expressions_[i].path;
    if (p.size() == 1 && p[0].kind == JmesPathStep::Kind::kField) {
      auto it = std::find_if(top_fields_.begin(), top_fields_.end(),
                             [&](const TopField& f) { return f.name == p[0].field; });
      if (it == top_fields_.end()) {
        top_fields_.push_back(TopField{p[0].field, {i}});
      } else {
        it->expressions.push_back(i);
      }
    } else {
      deep_.push_back(i);
    }
  }
  source_ = c.OptString("source");
  drop_malformed_ = c.Bool("drop_malformed", false);
  found_.resize(expressions_.size());
}

Value& JsonStage::Target(Extracted& out, size_t expression) {
  Expression& e = expressions_[expression];
  Value& v = out.UpsertHinted(e.key, e.hint);
  if (e.hint < mark_) {
    // An existing key: keep its old value in case the input turns out malformed.
    bool saved = false;
    for (const auto& o : overwritten_) saved |= o.first == e.hint;
    if (!saved) overwritten_.emplace_back(e.hint, v);
  }
  return v;
}

bool JsonStage::Store(od::value v, Value& dst) {
  od::json_type type;
  if (v.type().get(type)) return false;
  switch (type) {
    case od::json_type::string: {
      std::string_view s;
      if (v.get_string().get(s)) return false;
      dst.SetString(s);
      return true;
    }
    case od::json_type::number: {
      od::number_type nt;
      if (v.get_number_type().get(nt)) return false;
      if (nt == od::number_type::signed_integer) {
        int64_t i;
        if (v.get_int64().get(i)) return false;
        dst.SetInt(i);
        return true;
      }
      double d;
      if (v.get_double().get(d)) return false;
      dst.SetDouble(d);
      return true;
    }
    case od::json_type::boolean: {
      bool b;
      if (v.get_bool().get(b)) return false;
      dst.SetBool(b);
      return true;
    }
    case od::json_type::null: {
      bool is_null;
      if (v.is_null().get(is_null) || !is_null) return false;
      dst.SetNull();
      return true;
    }
    case od::json_type::object:
    case od::json_type::array: {
      std::string_view raw;
      if (simdjson::to_json_string(v).get(raw)) return false;
      std::string& s = dst.MutableString();
      s.resize(raw.size());
      size_t len = 0;
      if (simdjson::minify(raw.data(), raw.size(), s.data(), len) != simdjson::SUCCESS) {
        return false;
      }
      s.resize(len);
      return true;
    }
  }
  return false;
}

bool JsonStage::Extract(std::string_view text, Extracted& out) {
  const size_t need = text.size() + simdjson::SIMDJSON_PADDING;
  if (padded_.size() < need) padded_.resize(need);
  std::memcpy(padded_.data(), text.data(), text.size());
  std::memset(padded_.data() + text.size(), 0, simdjson::SIMDJSON_PADDING);
  simdjson::padded_string_view input(padded_.data(), text.size(), padded_.size());

  od::document doc;
  if (parser_.iterate(input).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  std::fill(found_.begin(), found_.end(), false);
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    for (const TopField& tf : top_fields_) {
      if (tf.name.size() != key.size() || tf.name != key) continue;
      const size_t first = tf.expressions[0];
      if (!Store(field.value(), Target(out, first))) return false;
      found_[first] = true;
      for (size_t k = 1; k < tf.expressions.size(); ++k) {
        const size_t idx = tf.expressions[k];
        Target(out, idx) = out.at(expressions_[first].hint);
        found_[idx] = true;
      }
      break;
    }
  }
  const char* trailing;
  if (doc.current_location().get(trailing) == simdjson::SUCCESS) return false;  // text after }

  for (size_t idx : deep_) {
    doc.rewind();
    od::value cur;
    if (doc.get_value().get(cur)) return false;
    bool ok = true;
    for (const JmesPathStep& step : expressions_[idx].path) {
      if (step.kind == JmesPathStep::Kind::kField) {
        od::object o;
        if (cur.get_object().get(o) || o.find_field_unordered(step.field).get(cur)) {
          ok = false;
          break;
        }
      } else {
        od::array a;
        if (cur.get_array().get(a)) {
          ok = false;
          break;
        }
        int64_t i = step.index;
        if (i < 0) {
          size_t n;
          if (a.count_elements().get(n)) return false;
          i += static_cast<int64_t>(n);
          if (i < 0) {
            ok = false;
            break;
          }
        }
        if (a.at(static_cast<size_t>(i)).get(cur)) {
          ok = false;
          break;
        }
      }
    }
    if (ok && Store(cur, Target(out, idx))) found_[idx] = true;
  }
  for (size_t i = 0; i < expressions_.size(); ++i) {
    if (!found_[i]) Target(out, i).SetNull();
  }
  return true;
}

Verdict JsonStage::Process(Entry& entry, Downstream&) {
  std::string_view text = entry.line;
  std::string copy;
  if (source_) {
    const Value* v = entry.extracted.Find(*source_);
    if (!v) return Verdict::kPass;
    auto s = v->AsString();
    if (!s) return Verdict::kPass;
    copy.assign(s->data(), s->size());  // the extracted map changes while we read
    text = copy;
  }
  mark_ = entry.extracted.size();
  overwritten_.clear();
  if (Extract(text, entry.extracted)) return Verdict::kPass;
  for (auto& [idx, old] : overwritten_) entry.extracted.at(idx) = std::move(old);
  entry.extracted.TruncateTo(mark_);
  if (!drop_malformed_) return Verdict::kPass;
  ctx_.ReportDrop("drop_malformed");
  return Verdict::kDrop;
}

}  // namespace skald::stages
