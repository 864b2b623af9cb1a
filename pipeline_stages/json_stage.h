// json: extracts values from a JSON object (the line, or extracted[source]) with JMESPath
// expressions (`expressions: {key: path}`, empty path = the key itself).
//
// Scalars keep their type; null, or a path that matches nothing, sets the key to null; objects
// and arrays become their compact JSON text (original key order). Input that is not a JSON
// object leaves the entry unchanged, or drops it with `drop_malformed` (reason
// "drop_malformed").
//
// When every path is a single identifier, a validating scanner reads the line in place (no
// copy) and serves the common case: ASCII or valid UTF-8, simple escapes, integers of up to 18
// digits. Anything else it is not sure of (a \u escape or a fraction in an extracted value, an
// escaped key, any syntax error, ...) goes to simdjson On-Demand, which decides as it always
// did; so both give the same results. The simdjson path reuses its parser and padded buffer:
// one pass over the top-level fields serves every single-identifier path.
#pragma once

#include <simdjson.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "pipeline_stages/jmespath.h"
#include "pipeline_stages/jmespath_expression.h"
#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class JsonStage final : public Stage {
 public:
  JsonStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

  // For tests: stages built afterwards skip the fast scanner (simdjson decides everything).
  static void SetFastPathForTesting(bool enabled);

  // What the scanner found for one top-level field.
  struct Scanned {
    enum class Kind : uint8_t { kMissing, kNull, kBool, kInt, kString, kEscaped, kComposite };
    Kind kind = Kind::kMissing;
    bool boolean = false;
    int64_t integer = 0;
    const char* begin = nullptr;  // kString, kEscaped (between the quotes), kComposite
    size_t size = 0;
  };

 private:
  struct Expression {
    std::string key;  // extracted key
    JmesPath path;    // a plain path (identifiers, quoted keys, indexes): simdjson reads it
    std::optional<JmesExpression> general;  // any other expression: evaluated on the whole
                                            // document decoded (numbers as doubles, as Go)
    size_t hint = 0;                        // extracted slot used last time
  };
  // A top-level field that single-identifier paths read.
  struct TopField {
    std::string name;
    std::vector<size_t> expressions;
  };

  // Runs the expressions on text into values_; false when it is not a well-formed JSON object.
  bool Extract(std::string_view text);
  bool Store(simdjson::ondemand::value v, Value& dst);
  // Evaluates the general expressions on text (already checked to be an object) into values_,
  // or on `{}` when text is null; false when text is not JSON nlohmann reads.
  bool SearchGeneral(std::string_view text, bool null_document);
  // A general expression's result as Promtail stores it: strings as is, numbers, bools and null
  // typed, objects and arrays as their Go JSON encoding. False when it cannot be encoded.
  bool StoreResult(const nlohmann::json& result, Value& dst);
  // The fast scanner over text into scanned_; false when simdjson has to decide.
  bool Scan(std::string_view text);
  // Index of the top field named key, or -1; reads up to 16 bytes from key.
  inline int TopFieldOf(const char* key, size_t len) const;

  StageContext ctx_;
  std::vector<Expression> expressions_;
  std::vector<TopField> top_fields_;
  std::vector<size_t> deep_;     // expressions with more than one step or an index
  std::vector<size_t> general_;  // expressions that are not plain paths
  // Per expression: a general expression failed at run time (a function given the wrong
  // type): its key is left as it was, as Promtail skips it.
  std::vector<uint8_t> skipped_;
  std::optional<std::string> source_;
  bool drop_malformed_;
  bool fast_path_;                // all paths are single identifiers
  std::vector<uint16_t> top_of_;  // expression -> its top field (when fast_path_)
  std::vector<Scanned> scanned_;  // per top field
  // Per top field the scanner found an object or array for: its text as Promtail stores it
  // (go/go_json_reencode.h).
  std::vector<std::string> composites_;
  // Extract runs on a text whose bytes that are not UTF-8 were replaced by placeholders: Store
  // gives them back.
  bool stray_bytes_ = false;
  // The whole text is JSON that Go's decoder reads (valid, numbers within float64's range);
  // what simdjson did not reach of it was not checked. When the text holds a duplicated key,
  // the paths are read again as Go's map sees them (values_ then are those).
  bool IsGoJson(std::string_view text);
  std::string validated_;  // IsGoJson's scratch
  // composites_ of every composite in scanned_; false when one is not what Go can decode.
  bool ReencodeComposites();
  struct KeyWords {
    uint64_t w0, w1;  // the name's bytes, zero-padded to 16
    uint32_t len;
    uint16_t field;
  };
  std::vector<KeyWords> key_words_;  // top fields of names up to 16 bytes
  std::vector<uint16_t> key_table_;  // by KeyHash: key_words_ index + 1, or 0
  size_t key_mask_ = 0;              // key_table_.size() - 1
  // The keys of the previous line, by position: a key of up to 16 bytes without escapes.
  struct KeyAt {
    uint64_t w0, w1;  // its bytes, zero-padded
    uint32_t len;
    int16_t field;   // top field, or -1
    uint16_t flags;  // what scanning it found (non-ASCII bytes)
  };
  std::vector<KeyAt> layout_;
  int16_t empty_key_field_ = -1;  // the top field named "", if any
  uint64_t layout_seen_ = 0;      // Extracted::layout() under which every hint was set

  simdjson::ondemand::parser parser_;
  std::string padded_;
  std::vector<uint8_t> found_;
  std::vector<Value> values_;  // per expression; swapped into extracted when all went well
  std::vector<std::vector<uint16_t>> by_length_;       // key length -> top_fields_ indexes
  std::vector<std::pair<size_t, Value>> overwritten_;  // restored when the input is malformed
};

}  // namespace skald::stages
