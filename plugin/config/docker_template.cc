#include "plugin/config/docker_template.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <variant>
#include <vector>

#include "plugin/config/docker_template_node.h"
#include "plugin/config/docker_template_parser.h"

namespace skald {

namespace {

using Value = DockerTemplateValue;

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

// Docker's lower, upper and title (strings.Title: a letter after a non-letter-or-digit).
std::string ChangeCase(const std::string& fn, std::string text) {
  bool start = true;
  for (char& c : text) {
    auto u = static_cast<unsigned char>(c);
    if (fn == "lower") c = static_cast<char>(std::tolower(u));
    if (fn == "upper") c = static_cast<char>(std::toupper(u));
    if (fn == "title") {
      if (start && std::isalpha(u)) c = static_cast<char>(std::toupper(u));
      start = !std::isalnum(u);
    }
  }
  return text;
}

std::vector<std::string> Split(const std::string& text, const std::string& sep) {
  std::vector<std::string> parts;
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

std::string Join(const std::vector<std::string>& list, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    CheckSize(out.size() + (i ? sep.size() : 0) + list[i].size(), "the join");
    out += (i ? sep : "") + list[i];
  }
  return out;
}

std::string Pad(const std::string& text, long long pre, long long post) {
  const auto before = static_cast<std::size_t>(std::clamp(pre, 0LL, 1LL << 40));
  const auto after = static_cast<std::size_t>(std::clamp(post, 0LL, 1LL << 40));
  CheckSize(before + text.size() + after,
            ("pad of " + std::to_string(pre) + " and " + std::to_string(post) + " spaces").c_str());
  return std::string(before, ' ') + text + std::string(after, ' ');
}

}  // namespace

Value DockerTemplate::Node::Call(const std::string& fn, const std::vector<Value>& a) {
  auto s = [&](std::size_t i) { return i < a.size() ? AsString(a[i]) : std::string(); };
  auto n = [&](std::size_t i) { return i < a.size() ? AsInt(a[i]) : 0LL; };
  if (fn == "json") return nlohmann::json(s(0)).dump();
  if (fn == "lower" || fn == "upper" || fn == "title") return ChangeCase(fn, s(0));
  if (fn == "split") return Split(s(0), s(1));
  if (fn == "join") {
    if (!a.empty()) {
      if (auto* list = std::get_if<std::vector<std::string>>(&a[0])) return Join(*list, s(1));
    }
    return s(0);
  }
  if (fn == "pad") return Pad(s(0), n(1), n(2));
  if (fn == "truncate") {
    std::string text = s(0);
    const long long len = n(1);
    if (len >= 0 && static_cast<std::size_t>(len) < text.size())
      text.resize(static_cast<std::size_t>(len));
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

DockerTemplate::DockerTemplate() = default;
DockerTemplate::DockerTemplate(DockerTemplate&&) noexcept = default;
DockerTemplate& DockerTemplate::operator=(DockerTemplate&&) noexcept = default;
DockerTemplate::~DockerTemplate() = default;

DockerTemplate DockerTemplate::Parse(std::string_view text) {
  DockerTemplate t;
  t.text_ = std::string(text);
  t.root_ = std::make_unique<Node>(ParseDockerTemplate(text));
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
