#include "plugin/docker_template.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <variant>
#include <vector>

namespace skald {

namespace {

using Value = std::variant<std::string, std::vector<std::string>, long long>;

const char* const kFields[] = {"ID",
                               "FullID",
                               "Name",
                               "ImageID",
                               "ImageFullID",
                               "ImageName",
                               "DaemonName",
                               "Command",
                               "Hostname",
                               "ContainerID",
                               "ContainerName",
                               "ContainerImageID",
                               "ContainerImageName",
                               "ContainerEntrypoint",
                               "ContainerCreated",
                               "LogPath"};
const char* const kFunctions[] = {"json",  "split", "join", "title",
                                  "lower", "upper", "pad",  "truncate"};

std::string FieldValue(const std::string& f, const ContainerInfo& info, const std::string& host) {
  if (f == "ID") return info.ID();
  if (f == "FullID" || f == "ContainerID") return info.container_id;
  if (f == "Name") return info.Name();
  if (f == "ContainerName") return info.container_name;
  if (f == "ImageID") return info.ImageID();
  if (f == "ImageFullID") return info.ImageFullID();
  if (f == "ContainerImageID") return info.container_image_id;
  if (f == "ImageName" || f == "ContainerImageName") return info.container_image_name;
  if (f == "DaemonName") return info.daemon_name;
  if (f == "Command") return info.Command();
  if (f == "Hostname") return host;
  if (f == "ContainerEntrypoint") return info.container_entrypoint;
  if (f == "ContainerCreated") return info.container_created;
  if (f == "LogPath") return info.log_path;
  return {};
}

// Values are bounded as they are built: a longer one throws std::length_error (Render quotes
// the template).
void CheckSize(std::size_t size, const char* what) {
  if (size > DockerTemplate::kMaxOutputBytes) {
    throw std::length_error(std::string(what) + " would be longer than " +
                            std::to_string(DockerTemplate::kMaxOutputBytes) + " bytes");
  }
}

std::string AsString(const Value& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  if (auto* n = std::get_if<long long>(&v)) return std::to_string(*n);
  const auto& list = std::get<std::vector<std::string>>(v);
  std::string out = "[";
  for (std::size_t i = 0; i < list.size(); ++i) {
    out += (i ? " " : "") + list[i];
    CheckSize(out.size(), "a list's text");
  }
  return out + "]";
}

long long AsInt(const Value& v) {
  if (auto* n = std::get_if<long long>(&v)) return *n;
  try {
    return std::stoll(AsString(v));
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

// A node is literal text, or an action: a pipeline of commands, each a list of operands.
struct DockerTemplate::Node {
  enum class Kind { kText, kField, kString, kNumber, kFunction, kPipeline, kSequence };
  Kind kind = Kind::kSequence;
  std::string text;                         // literal, field name, function name
  long long number = 0;                     // kNumber
  std::vector<std::vector<Node>> commands;  // kPipeline: commands; each command: operands
  std::vector<Node> children;               // kSequence

  Value Eval(const ContainerInfo& info, const std::string& host) const;
  static Value Call(const std::string& fn, const std::vector<Value>& args);
};

Value DockerTemplate::Node::Call(const std::string& fn, const std::vector<Value>& a) {
  auto s = [&](std::size_t i) { return i < a.size() ? AsString(a[i]) : std::string(); };
  if (fn == "json") return nlohmann::json(s(0)).dump();
  if (fn == "lower" || fn == "upper" || fn == "title") {
    std::string out = s(0);
    bool start = true;
    for (char& c : out) {
      auto u = static_cast<unsigned char>(c);
      if (fn == "lower") c = static_cast<char>(std::tolower(u));
      if (fn == "upper") c = static_cast<char>(std::toupper(u));
      if (fn == "title") {
        if (start && std::isalpha(u)) c = static_cast<char>(std::toupper(u));
        start = !std::isalnum(u);
      }
    }
    return out;
  }
  if (fn == "split") {
    std::vector<std::string> parts;
    std::string text = s(0), sep = s(1);
    if (sep.empty()) {
      for (char c : text) parts.emplace_back(1, c);
      return parts;
    }
    std::size_t pos = 0;
    for (std::size_t next; (next = text.find(sep, pos)) != std::string::npos;
         pos = next + sep.size()) {
      parts.push_back(text.substr(pos, next - pos));
    }
    parts.push_back(text.substr(pos));
    return parts;
  }
  if (fn == "join") {
    std::string out, sep = s(1);
    if (!a.empty()) {
      if (auto* list = std::get_if<std::vector<std::string>>(&a[0])) {
        for (std::size_t i = 0; i < list->size(); ++i) {
          CheckSize(out.size() + (i ? sep.size() : 0) + (*list)[i].size(), "the join");
          out += (i ? sep : "") + (*list)[i];
        }
        return out;
      }
    }
    return s(0);
  }
  if (fn == "pad") {
    long long pre = a.size() > 1 ? AsInt(a[1]) : 0, post = a.size() > 2 ? AsInt(a[2]) : 0;
    const auto before = static_cast<std::size_t>(std::clamp(pre, 0LL, 1LL << 40));
    const auto after = static_cast<std::size_t>(std::clamp(post, 0LL, 1LL << 40));
    const std::string text = s(0);
    CheckSize(
        before + text.size() + after,
        ("pad of " + std::to_string(pre) + " and " + std::to_string(post) + " spaces").c_str());
    return std::string(before, ' ') + text + std::string(after, ' ');
  }
  if (fn == "truncate") {
    std::string text = s(0);
    long long n = a.size() > 1 ? AsInt(a[1]) : 0;
    if (n >= 0 && static_cast<std::size_t>(n) < text.size())
      text.resize(static_cast<std::size_t>(n));
    return text;
  }
  return std::string();
}

Value DockerTemplate::Node::Eval(const ContainerInfo& info, const std::string& host) const {
  switch (kind) {
    case Kind::kText:
    case Kind::kString:
      return text;
    case Kind::kNumber:
      return number;
    case Kind::kField:
      return FieldValue(text, info, host);
    case Kind::kFunction:
      return Call(text, {});
    case Kind::kSequence: {
      std::string out;
      for (const Node& c : children) {
        out += AsString(c.Eval(info, host));
        CheckSize(out.size(), "the output");
      }
      return out;
    }
    case Kind::kPipeline: {
      Value piped;
      bool have_piped = false;
      for (const auto& cmd : commands) {
        const Node& head = cmd.front();
        if (head.kind == Kind::kFunction) {
          std::vector<Value> args;
          for (std::size_t i = 1; i < cmd.size(); ++i) args.push_back(cmd[i].Eval(info, host));
          if (have_piped) args.push_back(piped);  // Go passes the piped value last
          piped = Call(head.text, args);
          if (auto* text = std::get_if<std::string>(&piped)) {
            CheckSize(text->size(), (head.text + "'s result").c_str());
          }
        } else {
          piped = head.Eval(info, host);
        }
        have_piped = true;
      }
      return piped;
    }
  }
  return std::string();
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  DockerTemplate::Node ParseAll() {
    using Node = DockerTemplate::Node;
    Node seq;
    seq.kind = Node::Kind::kSequence;
    std::size_t pos = 0;
    while (pos < text_.size()) {
      std::size_t open = text_.find("{{", pos);
      std::string literal(text_.substr(pos, open == std::string_view::npos ? open : open - pos));
      if (open == std::string_view::npos) {
        AddText(seq, literal);
        break;
      }
      std::size_t close = text_.find("}}", open + 2);
      if (close == std::string_view::npos) Fail("unclosed action: missing }}");
      std::string_view action = text_.substr(open + 2, close - open - 2);
      if (action.starts_with("-") && (action.size() == 1 || action[1] == ' ')) {
        while (!literal.empty() && std::isspace(static_cast<unsigned char>(literal.back()))) {
          literal.pop_back();
        }
        action.remove_prefix(1);
      }
      bool trim_after = false;
      if (action.ends_with("-") && (action.size() == 1 || action[action.size() - 2] == ' ')) {
        trim_after = true;
        action.remove_suffix(1);
      }
      AddText(seq, literal);
      action_ = action;
      apos_ = 0;
      seq.children.push_back(ParsePipeline());
      SkipSpace();
      if (apos_ != action_.size())
        Fail("unexpected \"" + std::string(action_.substr(apos_)) + "\"");
      pos = close + 2;
      if (trim_after) {
        while (pos < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos]))) ++pos;
      }
    }
    return seq;
  }

 private:
  using Node = DockerTemplate::Node;

  [[noreturn]] void Fail(const std::string& why) {
    throw std::invalid_argument("template \"" + std::string(text_) + "\": " + why);
  }

  static void AddText(Node& seq, const std::string& literal) {
    if (literal.empty()) return;
    Node t;
    t.kind = Node::Kind::kText;
    t.text = literal;
    seq.children.push_back(std::move(t));
  }

  void SkipSpace() {
    while (apos_ < action_.size() && std::isspace(static_cast<unsigned char>(action_[apos_]))) {
      ++apos_;
    }
  }

  Node ParsePipeline() {
    Node p;
    p.kind = Node::Kind::kPipeline;
    for (;;) {
      std::vector<Node> cmd;
      for (;;) {
        SkipSpace();
        if (apos_ >= action_.size() || action_[apos_] == '|' || action_[apos_] == ')') break;
        cmd.push_back(ParseOperand());
      }
      if (cmd.empty()) Fail("empty command");
      if (cmd.front().kind != Node::Kind::kFunction && cmd.size() > 1) {
        Fail("can't give arguments to a non-function");
      }
      p.commands.push_back(std::move(cmd));
      SkipSpace();
      if (apos_ < action_.size() && action_[apos_] == '|') {
        ++apos_;
        continue;
      }
      return p;
    }
  }

  Node ParseOperand() {
    Node n;
    char c = action_[apos_];
    if (c == '(') {
      ++apos_;
      n = ParsePipeline();
      SkipSpace();
      if (apos_ >= action_.size() || action_[apos_] != ')') Fail("missing )");
      ++apos_;
      return n;
    }
    if (c == '"' || c == '`') {
      std::size_t end = apos_ + 1;
      std::string value;
      while (end < action_.size() && action_[end] != c) {
        if (c == '"' && action_[end] == '\\' && end + 1 < action_.size()) {
          char e = action_[++end];
          value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else {
          value += action_[end];
        }
        ++end;
      }
      if (end >= action_.size()) Fail("unterminated string");
      apos_ = end + 1;
      n.kind = Node::Kind::kString;
      n.text = value;
      return n;
    }
    std::size_t start = apos_;
    while (apos_ < action_.size() && !std::isspace(static_cast<unsigned char>(action_[apos_])) &&
           action_[apos_] != '|' && action_[apos_] != '(' && action_[apos_] != ')') {
      ++apos_;
    }
    std::string word(action_.substr(start, apos_ - start));
    if (word.size() > 1 && word[0] == '.') {
      std::string field = word.substr(1);
      for (const char* f : kFields) {
        if (field == f) {
          n.kind = Node::Kind::kField;
          n.text = field;
          return n;
        }
      }
      Fail("unknown field " + word +
           " (known: .ID .FullID .Name .ImageID .ImageFullID .ImageName .DaemonName .Command "
           ".Hostname)");
    }
    if (!word.empty() && (std::isdigit(static_cast<unsigned char>(word[0])) || word[0] == '-')) {
      try {
        n.kind = Node::Kind::kNumber;
        n.number = std::stoll(word);
        return n;
      } catch (const std::exception&) {
        Fail("bad number " + word);
      }
    }
    for (const char* f : kFunctions) {
      if (word == f) {
        n.kind = Node::Kind::kFunction;
        n.text = word;
        return n;
      }
    }
    Fail("function \"" + word +
         "\" not defined (known: json split join title lower upper pad truncate)");
  }

  std::string_view text_;
  std::string_view action_;
  std::size_t apos_ = 0;
};

}  // namespace

DockerTemplate::DockerTemplate() = default;
DockerTemplate::DockerTemplate(DockerTemplate&&) noexcept = default;
DockerTemplate& DockerTemplate::operator=(DockerTemplate&&) noexcept = default;
DockerTemplate::~DockerTemplate() = default;

DockerTemplate DockerTemplate::Parse(std::string_view text) {
  DockerTemplate t;
  t.text_ = std::string(text);
  t.root_ = std::make_unique<Node>(Parser(text).ParseAll());
  return t;
}

std::string DockerTemplate::Render(const ContainerInfo& info, const std::string& hostname) const {
  try {
    return AsString(root_->Eval(info, hostname));
  } catch (const std::length_error& e) {
    throw std::length_error("template \"" + text_ + "\": " + e.what());
  }
}

}  // namespace skald
