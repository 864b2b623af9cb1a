#include "pipeline_stages/go_template/go_template.h"

#include <absl/container/inlined_vector.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/go/go_time_layout.h"
#include "pipeline_stages/go_template/go_template_functions.h"

namespace skald::stages {

using go_template_internal::Budget;
using go_template_internal::CallContext;
using go_template_internal::Function;
using go_template_internal::GoType;
using go_template_internal::Map;
using go_template_internal::Value;

namespace {

struct Pipeline;
struct Node;
using NodeList = std::vector<Node>;

struct Operand {
  enum class Kind { kField, kVariable, kDot, kLiteral, kNil, kFunction, kParen, kChain };
  Kind kind = Kind::kDot;
  std::vector<std::string> fields;     // kField .a.b; kVariable $x.a.b (after the name); kChain
  std::string variable;                // kVariable: "$x" or "$"
  Value literal;                       // kLiteral (strings own their text)
  bool number = false;                 // kLiteral written as a number or character
  const Function* function = nullptr;  // kFunction
  std::unique_ptr<Pipeline> sub;       // kParen
  std::unique_ptr<Operand> base;       // kChain: the parenthesised pipeline or function
  size_t pos = 0;
};

struct Command {
  std::vector<Operand> operands;  // a function and its arguments, or a single operand
  std::shared_ptr<RE2> regex;     // a regex function's literal pattern, compiled once
  size_t pos = 0;
};

struct Pipeline {
  std::vector<std::string> decl;  // $x := / $i, $v := / $x =
  bool is_assign = false;
  std::vector<Command> commands;
  size_t pos = 0;
};

struct Branch {
  Pipeline condition;
  NodeList body;
  bool with = false;  // {{with}} / {{else with}}: the body's dot is the condition's value
};

struct Node {
  enum class Kind { kText, kAction, kIf, kWith, kRange, kTemplate, kBreak, kContinue };
  Kind kind = Kind::kText;
  std::string text;                  // kText; kTemplate: the name
  Pipeline pipeline;                 // kAction, kRange, kTemplate (may have no commands)
  std::vector<Branch> branches;      // kIf, kWith: if / else if ...
  NodeList body;                     // kRange
  NodeList otherwise;                // kIf, kWith, kRange: else
  const NodeList* target = nullptr;  // kTemplate: the template called
  size_t pos = 0;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Methods of time.Time a template may call (on `now`, `toDate`, ...), and whether they take an
// argument.
struct TimeMethod {
  std::string_view name;
  char param;  // 0: none; 's': a string; 't': a time
};
constexpr TimeMethod kTimeMethods[] = {
    {"Unix", 0},       {"UnixMilli", 0}, {"UnixMicro", 0}, {"UnixNano", 0}, {"Year", 0},
    {"YearDay", 0},    {"Day", 0},       {"Hour", 0},      {"Minute", 0},   {"Second", 0},
    {"Nanosecond", 0}, {"UTC", 0},       {"Local", 0},     {"String", 0},   {"IsZero", 0},
    {"Format", 's'},   {"Before", 't'},  {"After", 't'},   {"Equal", 't'},
};
const TimeMethod* FindTimeMethod(std::string_view name) {
  for (const TimeMethod& m : kTimeMethods) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// Methods of *semver.Version a template may call (on what `semver` returns), and whether they
// take a version.
struct VersionMethod {
  std::string_view name;
  bool takes_version;
};
constexpr VersionMethod kVersionMethods[] = {
    {"Major", false},           {"Minor", false},        {"Patch", false},
    {"Prerelease", false},      {"Metadata", false},     {"Original", false},
    {"String", false},          {"Compare", true},       {"Equal", true},
    {"LessThan", true},         {"LessThanEqual", true}, {"GreaterThan", true},
    {"GreaterThanEqual", true},
};
// Go's other methods of *semver.Version: they return a semver.Version (a type of its own), bytes,
// or change the version.
constexpr std::string_view kVersionMethodsNotOffered[] = {
    "IncMajor",    "IncMinor",      "IncPatch",      "SetPrerelease", "SetMetadata", "MarshalJSON",
    "MarshalText", "UnmarshalJSON", "UnmarshalText", "Scan",          "Value"};
const VersionMethod* FindVersionMethod(std::string_view name) {
  for (const VersionMethod& m : kVersionMethods) {
    if (m.name == name) return &m;
  }
  return nullptr;
}
constexpr std::string_view kVersionFields[] = {"major", "minor",    "patch",
                                               "pre",   "metadata", "original"};

// Functions that change a map given to them: with one of them, the data is copied into a map
// first, so that `set . "k" "v"` changes what `.k` reads as in Go.
bool MutatesMaps(std::string_view name) {
  return name == "set" || name == "unset" || name == "merge" || name == "mergeOverwrite" ||
         name == "mustMerge" || name == "mustMergeOverwrite";
}

constexpr int kMaxParseDepth = 100;

}  // namespace

struct GoTemplate::Impl {
  std::string source;
  NodeList nodes;
  std::map<std::string, std::shared_ptr<NodeList>, std::less<>> templates;
  bool copy_data = false;
  GoTemplate::Functions functions = GoTemplate::Functions::kPromtail;
};

namespace {

// How a list of nodes ended.
enum class ListEnd { kEof, kEnd, kElse, kElseIf, kElseWith, kDefine };

class TemplateParser {
 public:
  TemplateParser(std::string_view text, GoTemplate::Impl* impl) : text_(text), impl_(impl) {}

  void Parse() {
    vars_ = {"$"};
    const ListEnd end = ParseList(&impl_->nodes, 0);
    if (end != ListEnd::kEof) {
      pos_ = control_pos_;
      Fail(end == ListEnd::kEnd ? "unexpected {{end}}" : "unexpected {{else}}",
           "{{end}} and {{else}} only close {{if}}, {{with}}, {{range}}, {{define}} and "
           "{{block}}");
    }
    // Resolve {{template}} calls now that every definition is known.
    Resolve(&impl_->nodes);
    for (auto& [name, body] : impl_->templates) Resolve(body.get());
  }

  void Resolve(NodeList* nodes) {
    for (Node& n : *nodes) {
      if (n.kind == Node::Kind::kTemplate) {
        auto it = impl_->templates.find(n.text);
        if (it == impl_->templates.end()) {
          pos_ = n.pos;
          Fail("template \"" + n.text + "\" is not defined",
               "define it with {{define \"" + n.text + "\"}}...{{end}}");
        }
        n.target = it->second.get();
      }
      for (Branch& b : n.branches) Resolve(&b.body);
      Resolve(&n.body);
      Resolve(&n.otherwise);
    }
  }

 private:
  [[noreturn]] void Fail(std::string_view what, std::string_view accepted) const {
    std::string msg = "invalid template \"" + std::string(text_) + "\": " + std::string(what);
    if (pos_ < text_.size()) {
      msg.append(" at position ").append(std::to_string(pos_));
    } else {
      msg.append(" at the end");
    }
    if (!accepted.empty()) msg.append("; ").append(accepted);
    throw ConfigError(msg);
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  bool LookingAt(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  bool SkipSpace() {
    const size_t start = pos_;
    while (!AtEnd() && IsSpace(text_[pos_])) ++pos_;
    return pos_ != start;
  }
  bool AtClose(bool had_space) const { return LookingAt("}}") || (had_space && LookingAt("-}}")); }
  bool HadSpace() const { return pos_ > 0 && IsSpace(text_[pos_ - 1]); }

  void ExpectClose(bool had_space) {
    if (LookingAt("}}")) {
      pos_ += 2;
      return;
    }
    if (had_space && LookingAt("-}}")) {
      pos_ += 3;
      trim_next_ = true;
      return;
    }
    if (AtEnd()) Fail("unclosed action", "close it with }}");
    Fail("unexpected \"" + std::string(text_.substr(pos_, 1)) + "\" in action", "expected }}");
  }

  std::string_view PeekWord() const {
    size_t end = pos_;
    while (end < text_.size() && IsIdentChar(text_[end])) ++end;
    return text_.substr(pos_, end - pos_);
  }

  // A keyword ends at a non-identifier character.
  bool AtKeyword(std::string_view word) const { return PeekWord() == word; }

  std::string ParseTemplateName(std::string_view action) {
    SkipSpace();
    if (AtEnd() || (text_[pos_] != '"' && text_[pos_] != '`')) {
      Fail("{{" + std::string(action) + "}} needs a template name in quotes",
           "e.g. {{" + std::string(action) + " \"name\"}}");
    }
    std::string name, error;
    const size_t n = ReadGoStringLiteral(text_.substr(pos_), &name, &error);
    if (n == 0) Fail(error, "");
    pos_ += n;
    return name;
  }

  // Parses text and actions until EOF or a control action that ends the list.
  ListEnd ParseList(NodeList* nodes, int depth, Pipeline* else_pipeline = nullptr,
                    bool in_range = false) {
    if (depth > kMaxParseDepth) Fail("too deeply nested", "");
    while (true) {
      const size_t open = text_.find("{{", pos_);
      std::string_view text =
          text_.substr(pos_, open == std::string_view::npos ? std::string_view::npos : open - pos_);
      if (trim_next_) {
        while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
        trim_next_ = false;
      }
      const bool trim_left = open != std::string_view::npos && open + 3 < text_.size() &&
                             text_[open + 2] == '-' && IsSpace(text_[open + 3]);
      if (trim_left) {
        while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
      }
      if (!text.empty()) {
        if (!nodes->empty() && nodes->back().kind == Node::Kind::kText) {
          nodes->back().text.append(text);
        } else {
          Node n;
          n.kind = Node::Kind::kText;
          n.text = std::string(text);
          nodes->push_back(std::move(n));
        }
      }
      if (open == std::string_view::npos) {
        pos_ = text_.size();
        return ListEnd::kEof;
      }
      const size_t action_pos = open;
      pos_ = open + (trim_left ? 4 : 2);
      if (LookingAt("/*")) {
        const size_t close = text_.find("*/", pos_);
        if (close == std::string_view::npos) Fail("unclosed comment", "close it with */");
        pos_ = close + 2;
        const bool trim_right =
            pos_ + 1 < text_.size() && IsSpace(text_[pos_]) && text_.substr(pos_ + 1, 3) == "-}}";
        if (trim_right) ++pos_;
        if (!trim_right && !LookingAt("}}")) {
          Fail("comment must be followed directly by }} or \" -}}\"", "write {{/* comment */}}");
        }
        ExpectClose(trim_right);
        continue;
      }
      bool had_space = SkipSpace();
      const std::string_view word = PeekWord();
      if (word == "if" || word == "with" || word == "range") {
        pos_ += word.size();
        nodes->push_back(ParseControl(word, depth, action_pos, in_range));
        continue;
      }
      if (word == "end" || word == "else") {
        control_pos_ = action_pos;
        pos_ += word.size();
        had_space = SkipSpace();
        if (word == "else" && (AtKeyword("if") || AtKeyword("with"))) {
          const std::string_view kind = PeekWord();
          if (else_pipeline == nullptr) {
            pos_ = action_pos;
            Fail("unexpected {{else " + std::string(kind) + "}}",
                 "{{else " + std::string(kind) + "}} only inside {{" + std::string(kind) + "}}");
          }
          pos_ += kind.size();
          *else_pipeline = ParsePipeline(depth + 1, false, /*allow_decl=*/true);
          ExpectClose(HadSpace());
          return kind == "if" ? ListEnd::kElseIf : ListEnd::kElseWith;
        }
        ExpectClose(had_space);
        return word == "end" ? ListEnd::kEnd : ListEnd::kElse;
      }
      if (word == "break" || word == "continue") {
        if (!in_range) {
          Fail("{{" + std::string(word) + "}} outside {{range}}", "use it inside {{range}}");
        }
        pos_ += word.size();
        had_space = SkipSpace();
        ExpectClose(had_space);
        Node n;
        n.kind = word == "break" ? Node::Kind::kBreak : Node::Kind::kContinue;
        n.pos = action_pos;
        nodes->push_back(std::move(n));
        continue;
      }
      if (word == "define" || word == "block") {
        if (depth > 0 && word == "define") {
          Fail("unexpected {{define}} inside a control structure", "define templates at the top");
        }
        pos_ += word.size();
        const std::string name = ParseTemplateName(word);
        Pipeline arg;
        if (word == "block") {
          arg = ParsePipeline(depth + 1, false, false);
        } else {
          SkipSpace();
        }
        ExpectClose(HadSpace());
        // The body sees only `$` (the value the template is called with).
        std::vector<std::string> saved_vars;
        saved_vars.swap(vars_);
        vars_ = {"$"};
        auto body = std::make_shared<NodeList>();
        const ListEnd end = ParseList(body.get(), depth + 1);
        vars_.swap(saved_vars);
        if (end != ListEnd::kEnd) {
          pos_ = end == ListEnd::kEof ? action_pos : control_pos_;
          Fail("{{" + std::string(word) + "}} has no matching {{end}}", "close it with {{end}}");
        }
        Define(name, std::move(body), action_pos);
        if (word == "block") {
          Node n;
          n.kind = Node::Kind::kTemplate;
          n.text = name;
          n.pipeline = std::move(arg);
          n.pos = action_pos;
          nodes->push_back(std::move(n));
        }
        continue;
      }
      if (word == "template") {
        pos_ += word.size();
        const std::string name = ParseTemplateName(word);
        Node n;
        n.kind = Node::Kind::kTemplate;
        n.text = name;
        n.pos = action_pos;
        had_space = SkipSpace();
        if (!AtClose(had_space)) n.pipeline = ParsePipeline(depth + 1, false, false);
        ExpectClose(HadSpace());
        nodes->push_back(std::move(n));
        continue;
      }
      Node n;
      n.kind = Node::Kind::kAction;
      n.pos = action_pos;
      n.pipeline = ParsePipeline(depth + 1, false, /*allow_decl=*/true);
      ExpectClose(HadSpace());
      nodes->push_back(std::move(n));
    }
  }

  // Go's rule: an empty definition never replaces one; two non-empty ones are an error.
  void Define(const std::string& name, std::shared_ptr<NodeList> body, size_t at) {
    bool empty = true;
    for (const Node& n : *body) {
      if (n.kind != Node::Kind::kText || n.text.find_first_not_of(" \t\r\n") != std::string::npos) {
        empty = false;
      }
    }
    auto it = impl_->templates.find(name);
    if (it == impl_->templates.end()) {
      impl_->templates.emplace(name, std::move(body));
      return;
    }
    if (empty) return;
    bool old_empty = true;
    for (const Node& n : *it->second) {
      if (n.kind != Node::Kind::kText || n.text.find_first_not_of(" \t\r\n") != std::string::npos) {
        old_empty = false;
      }
    }
    if (!old_empty) {
      pos_ = at;
      Fail("multiple definition of template \"" + name + "\"", "define each template once");
    }
    it->second = std::move(body);
  }

  // After "{{ if" / "{{ with" / "{{ range" (the action began at start).
  Node ParseControl(std::string_view word, int depth, size_t start, bool in_range) {
    Node node;
    node.kind = word == "if"     ? Node::Kind::kIf
                : word == "with" ? Node::Kind::kWith
                                 : Node::Kind::kRange;
    node.pos = start;
    const size_t vars_mark = vars_.size();
    Pipeline first = ParsePipeline(depth + 1, false, /*allow_decl=*/true,
                                   /*range=*/node.kind == Node::Kind::kRange);
    ExpectClose(HadSpace());
    if (node.kind == Node::Kind::kRange) {
      node.pipeline = std::move(first);
      const ListEnd end = ParseList(&node.body, depth + 1, nullptr, /*in_range=*/true);
      if (end == ListEnd::kElse) {
        const ListEnd last = ParseList(&node.otherwise, depth + 1);
        if (last != ListEnd::kEnd) {
          pos_ = last == ListEnd::kEof ? start : control_pos_;
          Fail(last == ListEnd::kEof ? "{{range}} has no matching {{end}}"
                                     : "{{else}} after {{else}}",
               "expected {{end}}");
        }
      } else if (end != ListEnd::kEnd) {
        pos_ = start;
        Fail("{{range}} has no matching {{end}}", "close it with {{end}}");
      }
      vars_.resize(vars_mark);
      return node;
    }
    node.branches.push_back(Branch{std::move(first), {}, word == "with"});
    while (true) {
      Pipeline next;
      const ListEnd end = ParseList(&node.branches.back().body, depth + 1, &next, in_range);
      if (end == ListEnd::kEof) {
        pos_ = start;
        Fail("{{" + std::string(word) + "}} has no matching {{end}}", "close it with {{end}}");
      }
      if (end == ListEnd::kEnd) break;
      if (end == ListEnd::kElseIf || end == ListEnd::kElseWith) {
        if ((end == ListEnd::kElseIf) != (node.kind == Node::Kind::kIf)) {
          pos_ = control_pos_;
          Fail(end == ListEnd::kElseIf ? "{{else if}} inside {{with}}"
                                       : "{{else with}} inside {{if}}",
               "write {{else}} and a new {{if}} or {{with}} inside it");
        }
        node.branches.push_back(Branch{std::move(next), {}, end == ListEnd::kElseWith});
        continue;
      }
      const ListEnd last = ParseList(&node.otherwise, depth + 1, nullptr, in_range);
      if (last != ListEnd::kEnd) {
        pos_ = last == ListEnd::kEof ? start : control_pos_;
        Fail(last == ListEnd::kEof ? "{{" + std::string(word) + "}} has no matching {{end}}"
                                   : "{{else}} after {{else}}",
             "expected {{end}}");
      }
      break;
    }
    vars_.resize(vars_mark);
    return node;
  }

  // Reads "$name" at pos_ (without fields).
  std::string ReadVariableName() {
    const size_t start = pos_++;
    while (!AtEnd() && IsIdentChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  void UseVariable(const std::string& name, size_t at) {
    for (const std::string& v : vars_) {
      if (v == name) return;
    }
    pos_ = at;
    Fail("undefined variable \"" + name + "\"", "declare it first with " + name + " := ...");
  }

  // A pipeline up to "}}", " -}}" or (in_paren) ')', with an optional declaration first.
  Pipeline ParsePipeline(int depth, bool in_paren, bool allow_decl, bool range = false) {
    if (depth > kMaxParseDepth) Fail("too deeply nested", "");
    Pipeline p;
    bool had_space = SkipSpace();
    p.pos = pos_;
    if (allow_decl && !AtEnd() && text_[pos_] == '$') {
      // Look ahead for "$x :=", "$x =", "$i, $v :=".
      const size_t save = pos_;
      std::vector<std::string> names;
      bool is_decl = false, is_assign = false;
      while (!AtEnd() && text_[pos_] == '$') {
        names.push_back(ReadVariableName());
        SkipSpace();
        if (LookingAt(":=")) {
          pos_ += 2;
          is_decl = true;
          break;
        }
        if (LookingAt("=") && !LookingAt("==")) {
          ++pos_;
          is_assign = true;
          break;
        }
        if (!AtEnd() && text_[pos_] == ',' && names.size() == 1) {
          ++pos_;
          SkipSpace();
          continue;
        }
        break;
      }
      if (is_decl || is_assign) {
        if (names.size() > 1 && !range) {
          pos_ = save;
          Fail("too many declarations", "only {{range $i, $v := ...}} declares two variables");
        }
        for (const std::string& n : names) {
          if (is_assign) UseVariable(n, save);
        }
        p.decl = names;
        p.is_assign = is_assign;
        had_space = SkipSpace();
      } else {
        pos_ = save;
      }
    }
    while (true) {
      Command cmd;
      cmd.pos = pos_;
      while (true) {
        if (AtEnd()) Fail("unclosed action", in_paren ? "close it with )" : "close it with }}");
        if (AtClose(had_space) || text_[pos_] == '|' || text_[pos_] == ')') break;
        if (!cmd.operands.empty() && !had_space) {
          Fail("unexpected \"" + std::string(text_.substr(pos_, 1)) + "\" after an operand",
               "separate arguments with spaces");
        }
        cmd.operands.push_back(ParseOperand(depth));
        had_space = SkipSpace();
      }
      if (cmd.operands.empty()) {
        Fail(p.commands.empty() ? "missing value for command" : "missing command after |",
             "write a field such as .Value, a literal or a function call");
      }
      CheckCommand(&cmd, !p.commands.empty());
      p.commands.push_back(std::move(cmd));
      if (text_[pos_] == '|') {
        ++pos_;
        had_space = SkipSpace();
        continue;
      }
      if (text_[pos_] == ')') {
        if (!in_paren) Fail("unexpected \")\"", "parentheses must match");
        ++pos_;
        break;
      }
      if (in_paren) Fail("unclosed parenthesis", "close it with )");
      break;
    }
    // Declared variables are visible after the pipeline.
    if (!p.is_assign) {
      for (const std::string& n : p.decl) vars_.push_back(n);
    }
    return p;
  }

  // Fields after an operand: .a.b (no blank before the dot).
  void ParseFields(std::vector<std::string>* fields) {
    while (!AtEnd() && text_[pos_] == '.' && pos_ + 1 < text_.size() &&
           IsIdentStart(text_[pos_ + 1])) {
      const size_t start = ++pos_;
      while (!AtEnd() && IsIdentChar(text_[pos_])) ++pos_;
      fields->emplace_back(text_.substr(start, pos_ - start));
    }
  }

  Operand ParseOperand(int depth) {
    Operand op = ParseTerm(depth);
    // A chain: (pipeline).field or function.field.
    if (!AtEnd() && text_[pos_] == '.' && pos_ + 1 < text_.size() &&
        IsIdentStart(text_[pos_ + 1]) &&
        (op.kind == Operand::Kind::kParen || op.kind == Operand::Kind::kFunction)) {
      if (op.kind == Operand::Kind::kFunction) CheckBareFunction(op);
      Operand chain;
      chain.kind = Operand::Kind::kChain;
      chain.pos = op.pos;
      ParseFields(&chain.fields);
      chain.base = std::make_unique<Operand>(std::move(op));
      return chain;
    }
    if (!AtEnd() && text_[pos_] == '.' && op.kind == Operand::Kind::kNil) {
      Fail("indirection through explicit nil", "");
    }
    return op;
  }

  Operand ParseTerm(int depth) {
    Operand op;
    op.pos = pos_;
    const char c = text_[pos_];
    if (c == '$') {
      op.kind = Operand::Kind::kVariable;
      op.variable = ReadVariableName();
      UseVariable(op.variable, op.pos);
      ParseFields(&op.fields);
      return op;
    }
    if (c == '.') {
      if (pos_ + 1 < text_.size() && IsIdentStart(text_[pos_ + 1])) {
        op.kind = Operand::Kind::kField;
        ParseFields(&op.fields);
        return op;
      }
      if (pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1])) return ParseNumber(std::move(op));
      ++pos_;
      op.kind = Operand::Kind::kDot;
      return op;
    }
    if (c == '"' || c == '`') {
      std::string value, error;
      const size_t n = ReadGoStringLiteral(text_.substr(pos_), &value, &error);
      if (n == 0) Fail(error, "");
      pos_ += n;
      op.kind = Operand::Kind::kLiteral;
      op.literal = Value::Own(std::move(value));
      return op;
    }
    if (c == '\'') return ParseCharacter(std::move(op));
    if (IsDigit(c) || ((c == '-' || c == '+') && pos_ + 1 < text_.size() &&
                       (IsDigit(text_[pos_ + 1]) || text_[pos_ + 1] == '.'))) {
      return ParseNumber(std::move(op));
    }
    if (c == '(') {
      ++pos_;
      op.kind = Operand::Kind::kParen;
      op.sub = std::make_unique<Pipeline>(ParsePipeline(depth + 1, true, false));
      return op;
    }
    if (IsIdentStart(c)) {
      const std::string_view word = PeekWord();
      pos_ += word.size();
      if (word == "true" || word == "false") {
        op.kind = Operand::Kind::kLiteral;
        op.literal = Value::Bool(word == "true");
        return op;
      }
      if (word == "nil") {
        op.kind = Operand::Kind::kNil;
        return op;
      }
      static constexpr std::string_view kKeywords[] = {
          "if", "else", "end", "range", "with", "define", "template", "block", "break", "continue"};
      for (std::string_view k : kKeywords) {
        if (word == k) {
          pos_ = op.pos;
          Fail("unexpected {{" + std::string(word) + "}} in an expression",
               "keywords start an action: {{" + std::string(word) + " ...}}");
        }
      }
      op.function = go_template_internal::FindFunction(word, impl_->functions);
      if (op.function == nullptr) {
        pos_ = op.pos;
        Fail("function \"" + std::string(word) + "\" is not supported",
             "supported functions: " +
                 go_template_internal::SupportedFunctionNames(impl_->functions));
      }
      if (!op.function->refused.empty()) {
        pos_ = op.pos;
        Fail("function \"" + std::string(word) +
                 "\" is refused: " + std::string(op.function->refused),
             "");
      }
      if (MutatesMaps(word)) impl_->copy_data = true;
      op.kind = Operand::Kind::kFunction;
      return op;
    }
    Fail("unexpected \"" + std::string(text_.substr(pos_, 1)) + "\" in action",
         "expected a field (.Value), a variable, a string, a number, a function or (");
  }

  // A Go character constant: an int.
  Operand ParseCharacter(Operand op) {
    const size_t start = pos_;
    size_t end = start + 1;
    while (end < text_.size() && text_[end] != '\'' && text_[end] != '\n') {
      end += text_[end] == '\\' ? 2 : 1;
    }
    if (end >= text_.size() || text_[end] != '\'') Fail("unterminated character constant", "");
    // Reuse the string literal reader on the same escapes.
    std::string body(text_.substr(start + 1, end - start - 1));
    if (body == "\"") body = "\\\"";
    if (body == "\\'") body = "'";
    std::string value, error;
    if (ReadGoStringLiteral("\"" + body + "\"", &value, &error) == 0) Fail(error, "");
    size_t n = 0;
    const char32_t r = value.empty() ? 0 : DecodeRune(value, 0, &n);
    if (value.empty() || n != value.size()) {
      Fail("malformed character constant " + std::string(text_.substr(start, end + 1 - start)), "");
    }
    pos_ = end + 1;
    op.kind = Operand::Kind::kLiteral;
    op.number = true;
    op.literal = Value::Int(static_cast<int64_t>(r));
    return op;
  }

  // Go number syntax: ints in decimal, 0x, 0o, 0b or leading-0 octal (with _ separators);
  // floats with '.', exponents, or hex mantissas.
  Operand ParseNumber(Operand op) {
    const size_t start = pos_;
    if (text_[pos_] == '+' || text_[pos_] == '-') ++pos_;
    while (!AtEnd()) {
      const char c = text_[pos_];
      if (IsIdentChar(c) || c == '.') {
        ++pos_;
      } else if ((c == '+' || c == '-') && (text_[pos_ - 1] | 0x20) == 'e' &&
                 !(text_.substr(start, 2) == "0x" || text_.substr(start, 2) == "0X")) {
        ++pos_;
      } else if ((c == '+' || c == '-') && (text_[pos_ - 1] | 0x20) == 'p') {
        ++pos_;
      } else {
        break;
      }
    }
    std::string digits;
    for (char ch : text_.substr(start, pos_ - start)) {
      if (ch != '_') digits.push_back(ch);
    }
    const std::string_view number = text_.substr(start, pos_ - start);
    auto bad = [&]() {
      pos_ = start;
      Fail("bad number syntax \"" + std::string(number) + "\"", "");
    };
    std::string_view body = digits;
    bool negative = false;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
      negative = body[0] == '-';
      body.remove_prefix(1);
    }
    int base = 10;
    std::string_view int_digits = body;
    if (body.size() > 1 && body[0] == '0') {
      const char p = static_cast<char>(body[1] | 0x20);
      if (p == 'x') {
        base = 16, int_digits = body.substr(2);
      } else if (p == 'o') {
        base = 8, int_digits = body.substr(2);
      } else if (p == 'b') {
        base = 2, int_digits = body.substr(2);
      } else if (body.find_first_of(".eE") == std::string_view::npos) {
        base = 8, int_digits = body.substr(1);
      }
    }
    op.kind = Operand::Kind::kLiteral;
    op.number = true;
    errno = 0;
    char* end = nullptr;
    const std::string int_str(int_digits);
    const unsigned long long u = int_str.empty() ? 0 : std::strtoull(int_str.c_str(), &end, base);
    if (!int_str.empty() && end == int_str.c_str() + int_str.size() && errno == 0 &&
        int_str[0] != '-' && int_str[0] != '+') {
      if (u > (negative ? 1ULL << 63 : static_cast<unsigned long long>(INT64_MAX))) bad();
      op.literal = Value::Int(negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u));
      return op;
    }
    end = nullptr;
    const double d = std::strtod(digits.c_str(), &end);
    if (digits.empty() || end != digits.c_str() + digits.size() || std::isinf(d) || std::isnan(d)) {
      bad();
    }
    op.literal = Value::Float(d);
    return op;
  }

  // Does this operand name a field chain whose last field could be a method taking arguments?
  static bool CouldBeMethodWithArgs(const Operand& op) {
    const std::vector<std::string>* fields = nullptr;
    if (op.kind == Operand::Kind::kField || op.kind == Operand::Kind::kVariable ||
        op.kind == Operand::Kind::kChain) {
      fields = &op.fields;
    }
    if (fields == nullptr || fields->empty()) return false;
    const TimeMethod* m = FindTimeMethod(fields->back());
    if (m != nullptr && m->param != 0) return true;
    const VersionMethod* v = FindVersionMethod(fields->back());
    return v != nullptr && v->takes_version;
  }

  // Checks a command once parsed: non-functions take no arguments; later pipeline stages are
  // functions (or methods); functions get their argument count and literal types right.
  void CheckCommand(Command* cmd, bool piped) {
    Operand& head = cmd->operands[0];
    if (head.kind != Operand::Kind::kFunction) {
      if (head.kind == Operand::Kind::kNil) {
        pos_ = head.pos;
        Fail("nil is not a command", "nil is only an argument");
      }
      const bool method = CouldBeMethodWithArgs(head);
      if (piped && !method) {
        pos_ = head.pos;
        Fail("a pipeline stage after | must be a function", "e.g. {{ .Value | ToUpper }}");
      }
      if (cmd->operands.size() > 1 && !method) {
        pos_ = cmd->operands[1].pos;
        Fail("can't give an argument to a non-function", "only functions take arguments");
      }
      for (size_t k = 1; k < cmd->operands.size(); ++k) CheckBareFunction(cmd->operands[k]);
      return;
    }
    const Function& f = *head.function;
    const int nargs = static_cast<int>(cmd->operands.size()) - 1 + (piped ? 1 : 0);
    if (nargs < f.min_args() || (f.max_args() >= 0 && nargs > f.max_args())) {
      pos_ = head.pos;
      std::string want = std::to_string(f.min_args());
      if (f.max_args() < 0) want = "at least " + want;
      Fail("wrong number of arguments for " + std::string(f.name) + ": want " + want + ", got " +
               std::to_string(nargs) + (piped ? " (the piped value counts as the last)" : ""),
           "");
    }
    for (size_t k = 1; k < cmd->operands.size(); ++k) {
      Operand& arg = cmd->operands[k];
      if (CheckBareFunction(arg)) continue;
      const char want = f.ParamAt(k - 1);
      if (arg.kind == Operand::Kind::kNil) {
        if (want != 'a' && want != 'r' && want != 'm' && want != 'L') {
          pos_ = arg.pos;
          Fail("cannot give nil as argument " + std::to_string(k) + " of " + std::string(f.name) +
                   " (it wants " + std::string(go_template_internal::ParamTypeName(want)) + ")",
               "");
        }
        continue;
      }
      if (arg.kind != Operand::Kind::kLiteral) continue;
      Value& lit = arg.literal;
      // Go reads a number literal as the parameter's type when it fits.
      if (want == 'i' && lit.type == GoType::kFloat64 && lit.d == std::trunc(lit.d) &&
          std::fabs(lit.d) < 9e18) {
        lit = Value::Int(static_cast<int64_t>(lit.d));
      }
      if (want == 'f' && lit.type == GoType::kInt && arg.number) {
        lit = Value::Float(static_cast<double>(lit.i));
      }
      bool ok = true;
      std::string_view expected;
      switch (want) {
        case 's':
          ok = lit.is_string(), expected = "a string";
          break;
        case 'i':
          ok = lit.type == GoType::kInt, expected = "an integer";
          break;
        case 'f':
          ok = lit.type == GoType::kFloat64, expected = "a number";
          break;
        case 'b':
          ok = lit.type == GoType::kBool, expected = "true or false";
          break;
        case 't':
          ok = false, expected = "a time (e.g. now)";
          break;
        case 'm':
          ok = false, expected = "a map (e.g. dict \"k\" \"v\")";
          break;
        case 'L':
          ok = false, expected = "a list of strings (e.g. split .Name \"-\")";
          break;
        default:
          break;
      }
      if (!ok) {
        pos_ = arg.pos;
        Fail("argument " + std::to_string(k) + " of " + std::string(f.name) + " must be " +
                 std::string(expected),
             "");
      }
    }
    if (f.regex_arg == 0 && cmd->operands.size() > 1 &&
        cmd->operands[1].kind == Operand::Kind::kLiteral && cmd->operands[1].literal.is_string()) {
      const std::string pattern(cmd->operands[1].literal.s);
      std::string error;
      cmd->regex = CompileGoRegexp(pattern, &error);
      if (!cmd->regex) {
        pos_ = cmd->operands[1].pos;
        Fail("invalid regex \"" + pattern + "\" for " + std::string(f.name) + " (" + error + ")",
             "an RE2 regular expression");
      }
    }
  }

  // A bare function as an argument is a call without arguments; true when `arg` is one.
  bool CheckBareFunction(const Operand& arg) {
    if (arg.kind != Operand::Kind::kFunction) return false;
    const Function& inner = *arg.function;
    if (inner.min_args() > 0) {
      pos_ = arg.pos;
      Fail("function " + std::string(inner.name) + " used as an argument without its arguments",
           "wrap the call in parentheses: (" + std::string(inner.name) + " ...)");
    }
    return true;
  }

  std::string_view text_;
  GoTemplate::Impl* impl_;
  size_t pos_ = 0;
  size_t control_pos_ = 0;
  bool trim_next_ = false;
  std::vector<std::string> vars_;
};

enum class Flow { kNext, kFail, kBreak, kContinue };

class Executor {
 public:
  Executor(const GoTemplate::Impl& impl, std::string* out, std::string* error)
      : impl_(impl), out_(out), error_(error) {
    budget_.steps = GoTemplate::kMaxSteps;
    budget_.bytes = GoTemplate::kMaxBuiltBytes;
  }
  ~Executor() {
    // Maps can hold themselves (`set $d "d" $d`); empty them so no cycle outlives the run.
    for (const auto& m : maps_) {
      if (auto p = m.lock()) p->clear();
    }
  }

  bool Run(const TemplateData& data) {
    Value dot = Value::Data(&data);
    if (impl_.copy_data) {
      auto m = std::make_shared<Map>(go_template_internal::MapEntries(dot));
      dot = Value::MakeMap(GoType::kMapAny, m);
    }
    vars_.clear();
    vars_.emplace_back("$", dot);
    return Walk(impl_.nodes, dot) == Flow::kNext;
  }

  bool too_long() const { return too_long_; }

 private:
  bool Fail(std::string msg) {
    if (error_) *error_ = std::move(msg);
    return false;
  }
  bool TooLong(std::string msg) {
    too_long_ = true;
    return Fail(std::move(msg));
  }
  bool Step() {
    if (--budget_.steps >= 0) return true;
    return TooLong("the template takes more than " + std::to_string(GoTemplate::kMaxSteps) +
                   " steps");
  }
  bool CheckOutput() {
    if (out_->size() <= GoTemplate::kMaxOutputBytes) return true;
    return TooLong("output longer than " + std::to_string(GoTemplate::kMaxOutputBytes) + " bytes");
  }

  // Field `name` of the data. A list or a map is built once per execution (a template may read
  // it in a loop) and charged to the budget as it is built; a field a struct lacks fails.
  bool DataField(const Value& data, const std::string& name, Value* result) {
    if (auto it = data_fields_.find(name); it != data_fields_.end()) {
      *result = it->second;
      return true;
    }
    const TemplateValue field = data.data->Lookup(name);
    if (field.kind == TemplateValue::Kind::kStringList ||
        field.kind == TemplateValue::Kind::kStringMap) {
      const size_t n = field.strings != nullptr ? field.strings->size() : field.string_map->size();
      budget_.steps -= static_cast<int64_t>(n);
      budget_.bytes -= static_cast<int64_t>(n * sizeof(Value));
      if (budget_.steps < 0 || budget_.bytes < 0) {
        return TooLong("the template takes too many steps (field " + name + " holds " +
                       std::to_string(n) + " items)");
      }
    }
    *result = Value::FromData(field);
    if (result->is_nil() && !data.data->StructType().empty()) {
      return Fail("can't evaluate field " + name + " in type " +
                  std::string(data.data->StructType()));
    }
    if (result->is_list() || result->is_map()) data_fields_.emplace(name, *result);
    return true;
  }

  Value* FindVar(std::string_view name) {
    for (size_t k = vars_.size(); k > 0; --k) {
      if (vars_[k - 1].first == name) return &vars_[k - 1].second;
    }
    return nullptr;
  }

  // `$x = v`. The parser lets a variable declared in one branch be assigned in the next; Go fails
  // that when it runs, and so does this.
  bool SetVar(std::string_view name, const Value& v) {
    Value* var = FindVar(name);
    if (var == nullptr) return Fail("undefined variable: " + std::string(name));
    *var = v;
    return true;
  }

  Flow Walk(const NodeList& nodes, const Value& dot) {
    if (++depth_ > GoTemplate::kMaxDepth) {
      --depth_;
      TooLong("exceeded maximum template depth (" + std::to_string(GoTemplate::kMaxDepth) + ")");
      return Flow::kFail;
    }
    const Flow flow = WalkList(nodes, dot);
    --depth_;
    return flow;
  }

  Flow WalkList(const NodeList& nodes, const Value& dot) {
    for (const Node& n : nodes) {
      if (!Step()) return Flow::kFail;
      switch (n.kind) {
        case Node::Kind::kText:
          out_->append(n.text);
          if (!CheckOutput()) return Flow::kFail;
          break;
        case Node::Kind::kAction: {
          Value v;
          if (!EvalPipeline(n.pipeline, dot, &v)) return Flow::kFail;
          if (n.pipeline.decl.empty()) {
            if (!go_template_internal::AppendPrinted(v, out_, GoTemplate::kMaxOutputBytes) ||
                !CheckOutput()) {
              CheckOutput();
              if (!too_long_) TooLong("output too deeply nested to print");
              return Flow::kFail;
            }
          }
          break;
        }
        case Node::Kind::kIf:
        case Node::Kind::kWith: {
          const size_t mark = vars_.size();
          const NodeList* body = &n.otherwise;
          Value new_dot = dot;
          for (const Branch& b : n.branches) {
            Value v;
            if (!EvalPipeline(b.condition, dot, &v)) return Flow::kFail;
            if (go_template_internal::IsTrue(v)) {
              body = &b.body;
              if (b.with) new_dot = std::move(v);
              break;
            }
          }
          const Flow flow = Walk(*body, new_dot);
          vars_.resize(mark);
          if (flow != Flow::kNext) return flow;
          break;
        }
        case Node::Kind::kRange: {
          const Flow flow = WalkRange(n, dot);
          if (flow == Flow::kFail) return flow;
          break;
        }
        case Node::Kind::kTemplate: {
          Value new_dot;
          if (!n.pipeline.commands.empty() && !EvalPipeline(n.pipeline, dot, &new_dot)) {
            return Flow::kFail;
          }
          Vars saved;
          saved.swap(vars_);
          vars_.emplace_back("$", new_dot);
          const Flow flow = Walk(*n.target, new_dot);
          vars_.swap(saved);
          if (flow == Flow::kFail) return flow;
          break;
        }
        case Node::Kind::kBreak:
          return Flow::kBreak;
        case Node::Kind::kContinue:
          return Flow::kContinue;
      }
    }
    return Flow::kNext;
  }

  Flow WalkRange(const Node& n, const Value& dot) {
    const size_t outer_mark = vars_.size();
    Value val;
    if (!EvalPipeline(n.pipeline, dot, &val)) return Flow::kFail;
    const size_t mark = vars_.size();
    const auto& decl = n.pipeline.decl;
    bool ran = false;
    auto iteration = [&](const Value& index, const Value& elem) -> Flow {
      ran = true;
      if (!Step()) return Flow::kFail;
      if (!decl.empty()) {
        if (n.pipeline.is_assign) {
          if (!SetVar(decl[0], decl.size() > 1 ? index : elem)) return Flow::kFail;
          if (decl.size() > 1 && !SetVar(decl[1], elem)) return Flow::kFail;
        } else {
          vars_[mark - 1].second = elem;
          if (decl.size() > 1) vars_[mark - 2].second = index;
        }
      }
      const Flow flow = Walk(n.body, elem);
      vars_.resize(mark);
      return flow;
    };
    Flow result = Flow::kNext;
    if (val.is_integer()) {
      if (decl.size() > 1) {
        Fail("can't use " + std::to_string(val.i) + " to iterate over more than one variable");
        return Flow::kFail;
      }
      for (int64_t k = 0; k < val.i; ++k) {
        const Flow flow = iteration(Value(), Value::Integer(val.type, k));
        if (flow == Flow::kFail) return flow;
        if (flow == Flow::kBreak) break;
      }
    } else if (val.is_list()) {
      const auto list = val.list;  // keeps the elements alive whatever the body assigns
      if (list) {
        for (size_t k = 0; k < list->size(); ++k) {
          const Flow flow = iteration(Value::Int(static_cast<int64_t>(k)), (*list)[k]);
          if (flow == Flow::kFail) return flow;
          if (flow == Flow::kBreak) break;
        }
      }
    } else if (go_template_internal::IsStructData(val)) {
      Fail("range can't iterate over " + std::string(val.data->StructType()));
      return Flow::kFail;
    } else if (val.is_map()) {
      const Map entries = go_template_internal::MapEntries(val);
      for (const auto& [key, item] : entries) {
        const Flow flow = iteration(Value::Own(key), item);
        if (flow == Flow::kFail) return flow;
        if (flow == Flow::kBreak) break;
      }
    } else if (!val.is_nil()) {
      // Go prints the value; Docker's templates read the options, where credentials live, so
      // theirs name its type only.
      std::string printed;
      if (impl_.functions == GoTemplate::Functions::kDockerTag) {
        printed = "a value of type " + std::string(go_template_internal::TypeName(val));
      } else {
        go_template_internal::AppendValue(val, &printed, 200);
      }
      Fail("range can't iterate over " + printed);
      return Flow::kFail;
    }
    if (!ran) {
      const Flow flow = Walk(n.otherwise, dot);
      if (flow == Flow::kFail) return flow;
    }
    vars_.resize(outer_mark);
    return result;
  }

  bool EvalPipeline(const Pipeline& p, const Value& dot, Value* v) {
    bool piped = false;
    for (const Command& cmd : p.commands) {
      Value result;
      if (!EvalCommand(cmd, dot, piped ? v : nullptr, &result)) return false;
      *v = std::move(result);
      piped = true;
    }
    for (const std::string& name : p.decl) {
      if (p.is_assign) {
        if (!SetVar(name, *v)) return false;
      } else {
        vars_.emplace_back(name, *v);
      }
    }
    return true;
  }

  using Operands = std::span<const Operand>;

  bool NotAFunction(Operands args, const Value* final) {
    if (!args.empty() || final != nullptr) return Fail("can't give argument to non-function");
    return true;
  }

  bool EvalCommand(const Command& cmd, const Value& dot, Value* final, Value* result) {
    if (!Step()) return false;
    const Operand& head = cmd.operands[0];
    const Operands args(cmd.operands.data() + 1, cmd.operands.size() - 1);
    switch (head.kind) {
      case Operand::Kind::kFunction:
        return CallFunction(*head.function, args, cmd.regex.get(), dot, final, result);
      case Operand::Kind::kField:
      case Operand::Kind::kVariable:
      case Operand::Kind::kChain:
        return EvalChain(head, args, dot, final, result);
      default:
        if (!NotAFunction(args, final)) return false;
        return EvalOperand(head, dot, result);
    }
  }

  // A field, variable or chain operand, with the command's arguments (and the piped value) for
  // its last field when that is a method.
  bool EvalChain(const Operand& op, Operands args, const Value& dot, Value* final, Value* result) {
    Value receiver;
    if (op.kind == Operand::Kind::kField) {
      receiver = dot;
    } else if (op.kind == Operand::Kind::kVariable) {
      const Value* var = FindVar(op.variable);
      if (var != nullptr) receiver = *var;
      if (op.fields.empty()) {
        if (!NotAFunction(args, final)) return false;
        *result = std::move(receiver);
        return true;
      }
    } else if (!EvalOperand(*op.base, dot, &receiver)) {
      return false;
    }
    const auto& fields = op.fields;
    // A value read from a map[string]interface{} has Go's static type interface {}.
    bool from_interface_map = false;
    for (size_t k = 0; k + 1 < fields.size(); ++k) {
      Value next;
      if (!EvalField({}, dot, receiver, fields[k], nullptr, &next, from_interface_map)) {
        return false;
      }
      // A struct's field has its own type.
      from_interface_map = receiver.type == GoType::kMapAny ||
                           (receiver.type == GoType::kData && receiver.data->StructType().empty());
      receiver = std::move(next);
    }
    return EvalField(args, dot, receiver, fields.back(), final, result, from_interface_map);
  }

  bool EvalField(Operands args, const Value& dot, const Value& receiver, const std::string& name,
                 Value* final, Value* result, bool interface_typed) {
    const bool has_args = !args.empty() || final != nullptr;
    if (receiver.is_nil()) {
      *result = Value();
      return true;
    }
    if (receiver.type == GoType::kTime) {
      return CallTimeMethod(args, dot, receiver, name, final, result);
    }
    if (receiver.type == GoType::kVersion) {
      return CallVersionMethod(args, dot, receiver, name, final, result);
    }
    if (receiver.type == GoType::kData) {
      if (has_args) return Fail(name + " is not a method but has arguments");
      return DataField(receiver, name, result);
    }
    if (receiver.is_map()) {
      if (has_args) return Fail(name + " is not a method but has arguments");
      *result = go_template_internal::MapLookup(receiver, name);
      return true;
    }
    return Fail("can't evaluate field " + name + " in type " +
                (interface_typed ? std::string("interface {}")
                                 : std::string(go_template_internal::TypeName(receiver))));
  }

  bool CallTimeMethod(Operands arg_ops, const Value& dot, const Value& t, const std::string& name,
                      Value* final, Value* result) {
    const TimeMethod* m = FindTimeMethod(name);
    if (m == nullptr) {
      return Fail("can't evaluate field " + name +
                  " in type time.Time (the methods skald offers: Unix, UnixMilli, UnixMicro, "
                  "UnixNano, Year, YearDay, Day, Hour, Minute, Second, Nanosecond, UTC, Local, "
                  "String, IsZero, Format, Before, After, Equal)");
    }
    std::vector<Value> args;
    for (const Operand& op : arg_ops) {
      Value v;
      if (!EvalOperand(op, dot, &v)) return false;
      args.push_back(std::move(v));
    }
    if (final != nullptr) args.push_back(*final);
    const size_t want = m->param != 0 ? 1 : 0;
    if (args.size() != want) {
      return Fail("wrong number of args for " + name + ": want " + std::to_string(want) + " got " +
                  std::to_string(args.size()));
    }
    if (m->param == 's' && !args[0].is_string()) {
      return Fail("wrong type for value; expected string; got " +
                  std::string(go_template_internal::TypeName(args[0])));
    }
    if (m->param == 't' && args[0].type != GoType::kTime) {
      return Fail("wrong type for value; expected time.Time; got " +
                  std::string(go_template_internal::TypeName(args[0])));
    }
    const absl::TimeZone::CivilInfo ci = t.zone.At(t.time);
    const absl::CivilSecond& cs = ci.cs;
    if (name == "Unix") {
      *result = Value::Int64(absl::ToUnixSeconds(t.time));
    } else if (name == "UnixMilli") {
      *result = Value::Int64(absl::ToUnixMillis(t.time));
    } else if (name == "UnixMicro") {
      *result = Value::Int64(absl::ToUnixMicros(t.time));
    } else if (name == "UnixNano") {
      *result = Value::Int64(absl::ToUnixNanos(t.time));
    } else if (name == "Year") {
      *result = Value::Int(cs.year());
    } else if (name == "YearDay") {
      *result = Value::Int(absl::GetYearDay(absl::CivilDay(cs)));
    } else if (name == "Day") {
      *result = Value::Int(cs.day());
    } else if (name == "Hour") {
      *result = Value::Int(cs.hour());
    } else if (name == "Minute") {
      *result = Value::Int(cs.minute());
    } else if (name == "Second") {
      *result = Value::Int(cs.second());
    } else if (name == "Nanosecond") {
      *result = Value::Int(absl::ToInt64Nanoseconds(ci.subsecond));
    } else if (name == "UTC" || name == "Local") {
      *result = Value::Time(t.time, name == "UTC" ? absl::UTCTimeZone() : absl::LocalTimeZone(),
                            t.monotonic);
    } else if (name == "String") {
      *result = Value::Own(go_template_internal::FormatTimeString(t));
    } else if (name == "IsZero") {
      *result = Value::Bool(t.time == go_template_internal::GoZeroTime());
    } else if (name == "Format") {
      *result = Value::Own(GoTimeLayout::Format(args[0].s, t.time, t.zone));
      if (result->s.size() > GoTemplate::kMaxOutputBytes) {
        return TooLong("error calling Format: result longer than " +
                       std::to_string(GoTemplate::kMaxOutputBytes) + " bytes");
      }
    } else if (name == "Before") {
      *result = Value::Bool(t.time < args[0].time);
    } else if (name == "After") {
      *result = Value::Bool(t.time > args[0].time);
    } else {
      *result = Value::Bool(t.time == args[0].time);
    }
    return true;
  }

  bool CallVersionMethod(Operands arg_ops, const Value& dot, const Value& receiver,
                         const std::string& name, Value* final, Value* result) {
    const VersionMethod* m = FindVersionMethod(name);
    if (m == nullptr) {
      for (std::string_view field : kVersionFields) {
        if (field == name) {
          return Fail(name + " is an unexported field of struct type *semver.Version");
        }
      }
      std::string why = "can't evaluate field " + name + " in type *semver.Version";
      for (std::string_view other : kVersionMethodsNotOffered) {
        if (other == name) {
          why +=
              " (the methods skald offers: Major, Minor, Patch, Prerelease, Metadata, "
              "Original, String, Compare, Equal, LessThan, LessThanEqual, GreaterThan, "
              "GreaterThanEqual)";
        }
      }
      return Fail(why);
    }
    const size_t want = m->takes_version ? 1 : 0;
    const size_t got = arg_ops.size() + (final != nullptr ? 1 : 0);
    if (got != want) {
      return Fail("wrong number of args for " + name + ": want " + std::to_string(want) + " got " +
                  std::to_string(got));
    }
    const SemanticVersion v = go_template_internal::VersionOf(receiver);
    if (!m->takes_version) {
      if (name == "Major") {
        *result = Value::Uint64(v.major);
      } else if (name == "Minor") {
        *result = Value::Uint64(v.minor);
      } else if (name == "Patch") {
        *result = Value::Uint64(v.patch);
      } else if (name == "Prerelease") {
        *result = Value::Own(v.prerelease);
      } else if (name == "Metadata") {
        *result = Value::Own(v.metadata);
      } else if (name == "Original") {
        *result = Value::Own(v.original);
      } else {
        *result = Value::Own(v.String());
      }
      return true;
    }
    Value other;
    if (!arg_ops.empty()) {
      if (!EvalOperand(arg_ops[0], dot, &other)) return false;
    } else {
      other = *final;
    }
    if (other.is_nil()) {  // a nil *semver.Version: Equal says false, the others dereference it
      if (name == "Equal") {
        *result = Value::Bool(false);
        return true;
      }
      return Fail("error calling " + name +
                  ": runtime error: invalid memory address or nil pointer dereference");
    }
    if (other.type != GoType::kVersion) {
      return Fail("wrong type for value; expected *semver.Version; got " +
                  std::string(go_template_internal::TypeName(other)));
    }
    const int d = CompareVersions(v, go_template_internal::VersionOf(other));
    if (name == "Compare") {
      *result = Value::Int(d);
    } else if (name == "Equal") {
      *result = Value::Bool(d == 0);
    } else if (name == "LessThan") {
      *result = Value::Bool(d < 0);
    } else if (name == "LessThanEqual") {
      *result = Value::Bool(d <= 0);
    } else if (name == "GreaterThan") {
      *result = Value::Bool(d > 0);
    } else {
      *result = Value::Bool(d >= 0);
    }
    return true;
  }

  bool CallFunction(const Function& f, Operands arg_ops, const RE2* regex, const Value& dot,
                    Value* final, Value* result) {
    const size_t nargs = arg_ops.size() + (final ? 1 : 0);
    auto arg = [&](size_t k, Value* v) -> bool {
      if (k < arg_ops.size()) return EvalOperand(arg_ops[k], dot, v);
      *v = *final;
      return true;
    };
    if (f.impl == nullptr) {
      // and / or: the first false (and) / true (or) argument, else the last.
      for (size_t k = 0; k < nargs; ++k) {
        if (!arg(k, result)) return false;
        const bool truth = go_template_internal::IsTrue(*result);
        if (f.name == "and" ? !truth : truth) break;
      }
      return true;
    }
    absl::InlinedVector<Value, 4> args(nargs);
    for (size_t k = 0; k < nargs; ++k) {
      if (!arg(k, &args[k])) return false;
    }
    CallContext ctx(f.name, GoTemplate::kMaxOutputBytes, &budget_, regex);
    if (!go_template_internal::CallFunction(f, std::span<Value>(args.data(), args.size()), ctx,
                                            result)) {
      too_long_ = ctx.too_long();
      return Fail(ctx.error());
    }
    // Remember maps built or changed, to break any cycle they may form when the run ends.
    if (result->map) maps_.push_back(result->map);
    if (!args.empty() && args[0].map && MutatesMaps(f.name)) maps_.push_back(args[0].map);
    return true;
  }

  bool EvalOperand(const Operand& op, const Value& dot, Value* v) {
    switch (op.kind) {
      case Operand::Kind::kDot:
        *v = dot;
        return true;
      case Operand::Kind::kNil:
        *v = Value();
        return true;
      case Operand::Kind::kLiteral:
        if (op.literal.is_string()) {
          *v = Value::Borrow(op.literal.s);
        } else {
          *v = op.literal;
        }
        return true;
      case Operand::Kind::kField:
      case Operand::Kind::kVariable:
      case Operand::Kind::kChain:
        return EvalChain(op, {}, dot, nullptr, v);
      case Operand::Kind::kFunction:
        // As an argument: a call without arguments.
        if (!Step()) return false;
        return CallFunction(*op.function, {}, nullptr, dot, nullptr, v);
      case Operand::Kind::kParen:
        return EvalPipelineNoDecl(*op.sub, dot, v);
    }
    return false;
  }

  bool EvalPipelineNoDecl(const Pipeline& p, const Value& dot, Value* v) {
    bool piped = false;
    for (const Command& cmd : p.commands) {
      Value result;
      if (!EvalCommand(cmd, dot, piped ? v : nullptr, &result)) return false;
      *v = std::move(result);
      piped = true;
    }
    return true;
  }

  const GoTemplate::Impl& impl_;
  std::string* out_;
  std::string* error_;
  bool too_long_ = false;
  int depth_ = 0;
  Budget budget_;
  // Names point into the parsed template.
  using Vars = absl::InlinedVector<std::pair<std::string_view, Value>, 8>;
  Vars vars_;
  std::vector<std::weak_ptr<Map>> maps_;                   // maps built by this run
  std::map<std::string, Value, std::less<>> data_fields_;  // lists and maps read from the data
};

}  // namespace

void TemplateData::ForEach(
    const std::function<void(std::string_view, const TemplateValue&)>& /*f*/) const {}

MapTemplateData::MapTemplateData(
    std::initializer_list<std::pair<const std::string, std::string>> strings) {
  for (const auto& [name, value] : strings) SetString(name, value);
}

void MapTemplateData::SetString(std::string name, std::string value) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kString, std::move(value)};
}
void MapTemplateData::SetInt(std::string name, int64_t value) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kInt, {}, value};
}
void MapTemplateData::SetDouble(std::string name, double value) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kDouble, {}, 0, value};
}
void MapTemplateData::SetBool(std::string name, bool value) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kBool, {}, 0, 0, value};
}
void MapTemplateData::SetNull(std::string name) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kNull, {}};
}

TemplateValue MapTemplateData::View(const Stored& s) const {
  return TemplateValue{s.kind, s.str, s.i, s.d, s.b};
}

TemplateValue MapTemplateData::Lookup(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? TemplateValue::Missing() : View(it->second);
}

void MapTemplateData::ForEach(
    const std::function<void(std::string_view, const TemplateValue&)>& f) const {
  for (const auto& [name, stored] : values_) f(name, View(stored));
}

GoTemplate GoTemplate::Parse(std::string_view text, Functions functions) {
  auto impl = std::make_shared<Impl>();
  impl->source = std::string(text);
  impl->functions = functions;
  TemplateParser(impl->source, impl.get()).Parse();
  GoTemplate t;
  t.impl_ = std::move(impl);
  return t;
}

GoTemplate::Result GoTemplate::Execute(const TemplateData& data, std::string* out,
                                       std::string* error) const {
  out->clear();
  Executor executor(*impl_, out, error);
  if (executor.Run(data)) return Result::kOk;
  return executor.too_long() ? Result::kTooLong : Result::kFailed;
}

const std::string& GoTemplate::source() const { return impl_->source; }

}  // namespace skald::stages
