#include "plugin/config/docker_template_parser.h"

#include <cctype>
#include <stdexcept>
#include <string>

namespace skald {

namespace {

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

DockerTemplate::Node ParseDockerTemplate(std::string_view text) { return Parser(text).ParseAll(); }

}  // namespace skald
