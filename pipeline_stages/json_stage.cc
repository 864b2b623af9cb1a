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
  for (size_t i = 0; i < top_fields_.size(); ++i) {
    const size_t len = top_fields_[i].name.size();
    if (by_length_.size() <= len) by_length_.resize(len + 1);
    by_length_[len].push_back(static_cast<uint16_t>(i));
  }
  source_ = c.OptString("source");
  drop_malformed_ = c.Bool("drop_malformed", false);
  found_.resize(expressions_.size());
  values_.resize(expressions_.size());
}

bool JsonStage::Store(od::value v, Value& dst) {
  const std::string_view token = v.raw_json_token();
  if (token.empty()) return false;
  switch (token[0]) {
    case '"': {
      std::string_view s;
      if (v.get_string().get(s)) return false;
      dst.SetString(s);
      return true;
    }
    case 't':
    case 'f': {
      bool b;
      if (v.get_bool().get(b)) return false;
      dst.SetBool(b);
      return true;
    }
    case 'n': {
      bool is_null;
      if (v.is_null().get(is_null) || !is_null) return false;
      dst.SetNull();
      return true;
    }
    case '{':
    case '[': {
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
    default: {
      // Integers stay exact; anything else (fractions, exponents, huge) is a double.
      int64_t i;
      if (v.get_int64().get(i) == simdjson::SUCCESS) {
        dst.SetInt(i);
        return true;
      }
      double d;
      if (v.get_double().get(d)) return false;
      dst.SetDouble(d);
      return true;
    }
  }
}

bool JsonStage::Extract(std::string_view text) {
  const size_t need = text.size() + simdjson::SIMDJSON_PADDING;
  if (padded_.size() < need) padded_.resize(need);
  std::memcpy(padded_.data(), text.data(), text.size());
  std::memset(padded_.data() + text.size(), 0, simdjson::SIMDJSON_PADDING);
  simdjson::padded_string_view input(padded_.data(), text.size(), padded_.size());

  od::document doc;
  if (parser_.iterate(input).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  std::fill(found_.begin(), found_.end(), 0);
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key (the input is padded and every string is closed), unescaped only if needed.
    const char* raw = field.key().raw();
    size_t len = 0;
    while (raw[len] != '"' && raw[len] != '\\') ++len;
    std::string_view key(raw, len);
    if (raw[len] == '\\' && field.unescaped_key().get(key)) return false;
    if (key.size() >= by_length_.size()) continue;
    for (uint16_t t : by_length_[key.size()]) {
      const TopField& tf = top_fields_[t];
      if (std::memcmp(tf.name.data(), key.data(), key.size()) != 0) continue;
      const size_t first = tf.expressions[0];
      if (!Store(field.value(), values_[first])) return false;
      found_[first] = 1;
      for (size_t k = 1; k < tf.expressions.size(); ++k) {
        const size_t idx = tf.expressions[k];
        values_[idx] = values_[first];
        found_[idx] = 1;
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
    if (ok && Store(cur, values_[idx])) found_[idx] = 1;
  }
  for (size_t i = 0; i < expressions_.size(); ++i) {
    if (!found_[i]) values_[i].SetNull();
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
  if (Extract(text)) {
    for (size_t i = 0; i < expressions_.size(); ++i) {
      swap(entry.extracted.UpsertHinted(expressions_[i].key, expressions_[i].hint), values_[i]);
    }
    return Verdict::kPass;
  }
  if (!drop_malformed_) return Verdict::kPass;
  ctx_.ReportDrop("drop_malformed");
  return Verdict::kDrop;
}

}  // namespace skald::stages
