#include "plugin/config/docker_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <utility>
#include <vector>

namespace skald {
namespace {

using ::testing::HasSubstr;

ContainerInfo Info() {
  ContainerInfo i;
  i.config = {{"loki-url", "http://127.0.0.1:3100/loki/api/v1/push"}, {"mode", "non-blocking"}};
  i.container_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  i.container_name = "/web-1";
  i.container_image_id = "sha256:fedcba9876543210fedcba9876543210";
  i.container_image_name = "busybox:local";
  i.container_entrypoint = "sh";
  i.container_args = {"-c", "echo hi"};
  i.container_created = "2026-12-05T16:46:14.1234Z";
  i.container_env = {"PATH=/bin", "TEAM=<payments>"};
  i.container_labels = {{"team", "payments"}, {"tier", "web & api"}};
  i.daemon_name = "docker";
  return i;
}

std::string Render(std::string_view t) { return DockerTemplate::Parse(t).Render(Info(), "host1"); }

// Why Render refuses `t` (std::invalid_argument), or "" when it renders.
std::string RenderError(std::string_view t) {
  try {
    DockerTemplate::Parse(t).Render(Info(), "host1");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string ParseError(std::string_view t) {
  try {
    DockerTemplate::Parse(t);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Every expected text below is what Go's text/template printed for the same template over a
// logger.Info holding Info()'s values, with Docker's function map (go1.24, run by hand).
TEST(DockerTemplate, RendersLoggerInfoFieldsAndMethodsAsDockerDoes) {
  EXPECT_EQ(Render("{{.Name}}"), "web-1");
  EXPECT_EQ(Render("{{.ID}}"), "0123456789ab");
  EXPECT_EQ(Render("{{.FullID}}").size(), 64u);
  EXPECT_EQ(Render("{{.ImageID}}"), "sha256:fedcb");  // Docker keeps the algorithm's name
  EXPECT_EQ(Render("{{.ImageFullID}}"), "sha256:fedcba9876543210fedcba9876543210");
  EXPECT_EQ(Render("{{.ImageName}}"), "busybox:local");
  EXPECT_EQ(Render("{{.Command}}"), "sh -c echo hi");
  EXPECT_EQ(Render("{{.DaemonName}}/{{.Hostname}}"), "docker/host1");
  EXPECT_EQ(Render("{{.ContainerCreated}}"), "2026-12-05 16:46:14.1234 +0000 UTC");
  EXPECT_EQ(Render("{{.ContainerCreated.Year}}"), "2026");
  EXPECT_EQ(Render("{{json .ContainerCreated}}"), "\"2026-12-05T16:46:14.1234Z\"");
  EXPECT_EQ(Render("plain"), "plain");
}

TEST(DockerTemplate, ReadsLabelsEnvironmentArgumentsAndOptions) {
  EXPECT_EQ(Render("{{index .ContainerLabels \"team\"}}"), "payments");
  EXPECT_EQ(Render("{{.ContainerLabels.team}}"), "payments");
  EXPECT_EQ(Render("{{.ContainerLabels.nope}}"), "<no value>");
  EXPECT_EQ(Render("[{{index .ContainerLabels \"nope\"}}]"), "[]");
  EXPECT_EQ(Render("{{range .ContainerArgs}}<{{.}}>{{end}}"), "<-c><echo hi>");
  EXPECT_EQ(Render("{{index .Config \"mode\"}}"), "non-blocking");
  EXPECT_EQ(Render("{{.ContainerArgs}}"), "[-c echo hi]");
  EXPECT_EQ(Render("{{.ContainerLabels}}"), "map[team:payments tier:web & api]");
  EXPECT_EQ(Render("{{len .ContainerEnv}}"), "2");
  EXPECT_EQ(Render("{{if eq .Name \"web-1\"}}yes{{else}}no{{end}}"), "yes");
  EXPECT_EQ(Render("{{printf \"%s-%d\" .Name 7}}"), "web-1-7");
}

TEST(DockerTemplate, DockersFunctionsNotSprigs) {
  EXPECT_EQ(Render("{{upper .Name}}"), "WEB-1");
  EXPECT_EQ(Render("{{.Name | upper}}"), "WEB-1");
  EXPECT_EQ(Render("{{title \"hello wORLD\"}}"), "Hello WORLD");
  EXPECT_EQ(Render("{{truncate .Name 3}}"), "web");
  EXPECT_EQ(Render("{{truncate .ID 40}}"), "0123456789ab");
  // Docker's join takes the list first (sprig's takes the separator first).
  EXPECT_EQ(Render("{{join .ContainerArgs \",\"}}"), "-c,echo hi");
  EXPECT_EQ(Render("{{join (split .Name \"-\") \"_\"}}"), "web_1");
  EXPECT_EQ(Render("{{split .Name \"-\"}}"), "[web 1]");
  EXPECT_EQ(Render("{{json .Name}}"), "\"web-1\"");
  // No HTML escapes, keys in order.
  EXPECT_EQ(Render("{{json .ContainerLabels}}"), R"({"team":"payments","tier":"web & api"})");
  EXPECT_EQ(Render("{{json .ContainerEnv}}"), R"(["PATH=/bin","TEAM=<payments>"])");
  EXPECT_EQ(Render("{{pad .Name 1 2}}"), " web-1  ");
  EXPECT_EQ(Render("{{pad \"\" 3 3}}|"), "|");
  EXPECT_EQ(Render("a {{- \" b \" -}} c"), "a b c");
  EXPECT_THAT(ParseError("{{trunc 3 .Name}}"), HasSubstr("function \"trunc\" is not supported"));
}

TEST(DockerTemplate, ParseErrorsQuoteTheTemplateAndTheProblem) {
  // Go reports a field logger.Info lacks when the container starts; skald when the option is
  // read.
  EXPECT_THAT(ParseError("{{.Nmae}}"), HasSubstr("can't evaluate field Nmae in type *logger.Info"));
  EXPECT_THAT(ParseError("{{.Name.Foo}}"), HasSubstr("can't evaluate field Foo in type string"));
  EXPECT_THAT(ParseError("{{shout .Name}}"), HasSubstr("function \"shout\" is not supported"));
  EXPECT_THAT(ParseError("{{.Name"), HasSubstr("template \"{{.Name\""));
  EXPECT_THAT(ParseError("x {{.Name"), HasSubstr("template \"x {{.Name\""));
  EXPECT_EQ(ParseError("{{index .ContainerArgs 5}}"), "");  // depends on the container
}

TEST(DockerTemplate, AnExecutionGoFailsRefusesTheContainerWithGosReason) {
  EXPECT_THAT(RenderError("{{index .ContainerArgs 5}}"),
              HasSubstr("error calling index: index out of range: 5"));
  EXPECT_THAT(RenderError("{{truncate .Name -1}}"),
              HasSubstr("error calling truncate: runtime error: slice bounds out of range [:-1]"));
  EXPECT_THAT(RenderError("{{pad .Name -1 0}}"),
              HasSubstr("error calling pad: strings: negative Repeat count"));
  EXPECT_THAT(RenderError("{{join .Name \",\"}}"),
              HasSubstr("wrong type for value; expected []string; got string"));
  EXPECT_THAT(RenderError("{{lower .Config}}"),
              HasSubstr("wrong type for value; expected string; got map[string]string"));
  EXPECT_THAT(RenderError("{{index .ContainerArgs 5}}"),
              HasSubstr("template \"{{index .ContainerArgs 5}}\""));
}

// logger.Info is a struct: Go neither indexes it, nor measures it, nor ranges over it, so a
// template can only name its fields literally (what info.json keeps depends on it).
TEST(DockerTemplate, TheContainerIsAStructNotAMap) {
  EXPECT_THAT(RenderError("{{index . (print \"Container\" \"Env\")}}"),
              HasSubstr("can't index item of type *logger.Info"));
  EXPECT_THAT(RenderError("{{len .}}"), HasSubstr("len of type *logger.Info"));
  EXPECT_THAT(RenderError("{{range .}}{{end}}"),
              HasSubstr("range can't iterate over *logger.Info"));
  // Go would print the value it cannot range over; an option may hold a credential.
  const std::string error = RenderError("{{range .Config}}{{range .}}{{end}}{{end}}");
  EXPECT_THAT(error, HasSubstr("range can't iterate over a value of type string"));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("127.0.0.1")));
}

// A list or map field is built once per execution and paid for: reading it in a loop stays
// cheap, and a bigger one than the budget fails instead of running for minutes.
TEST(DockerTemplate, ListsAndMapsAreBuiltOncePerExecutionAndPaidFor) {
  ContainerInfo info = Info();
  for (int k = 0; k < 20000; ++k) info.container_labels["l" + std::to_string(k)] = "v";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(DockerTemplate::Parse("{{range 100000}}{{len $.ContainerLabels}}{{end}}")
                .Render(info, "")
                .size(),
            100000u * 5);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  for (int k = 0; k < 1'000'000; ++k) info.container_env.push_back("E=" + std::to_string(k));
  try {
    DockerTemplate::Parse("{{len .ContainerEnv}}").Render(info, "");
    ADD_FAILURE() << "a million-item list passed";
  } catch (const std::length_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("field ContainerEnv holds 1000002 items"));
  }
}

TEST(DockerTemplate, AContainerWithoutACreationTimeShowsGosZeroTime) {
  ContainerInfo info;
  info.container_id = "0123456789abcdef";
  EXPECT_EQ(DockerTemplate::Parse("{{.ContainerCreated}}|{{.Command}}|").Render(info, ""),
            "0001-01-01 00:00:00 +0000 UTC||");
  // Go's zero time as dockerd writes it, and times past what Unix nanoseconds hold.
  for (const auto& [created, shown] : std::vector<std::pair<std::string, std::string>>{
           {"0001-01-01T00:00:00Z", "0001-01-01 00:00:00 +0000 UTC"},
           {"3000-01-02T03:04:05.5Z", "3000-01-02 03:04:05.5 +0000 UTC"},
           {"infinite-future", "0001-01-01 00:00:00 +0000 UTC"}}) {
    info.container_created = created;
    EXPECT_EQ(DockerTemplate::Parse("{{.ContainerCreated}}").Render(info, ""), shown) << created;
  }
}

// A template's output, and every value on the way to it, is at most 1 MiB: more is refused
// before it is built (Docker's pad would allocate 2 GB here).
TEST(DockerTemplate, AnOutputOverOneMebibyteIsRefusedBeforeItIsBuilt) {
  auto error = [](std::string_view t, const ContainerInfo& info) -> std::string {
    try {
      DockerTemplate::Parse(t).Render(info, "host1");
    } catch (const std::length_error& e) {
      return e.what();
    }
    return "";
  };
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(error("{{pad .Name 2000000000 0}}", Info()),
              HasSubstr("template \"{{pad .Name 2000000000 0}}\": "));
  EXPECT_THAT(error("{{pad .Name 2000000000 0}}", Info()), HasSubstr("1048576 bytes"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_THAT(error("{{pad .Name 600000 0}}{{pad .Name 600000 0}}", Info()),
              HasSubstr("1048576 bytes"));
  EXPECT_THAT(error("{{join (split .FullID \"\") (pad \"x\" 20000 0)}}", Info()),
              HasSubstr("1048576 bytes"));
  EXPECT_EQ(Render("{{pad .Name 1048571 0}}").size(), 1048576u);
}

}  // namespace
}  // namespace skald
