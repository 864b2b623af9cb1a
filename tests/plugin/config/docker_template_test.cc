#include "plugin/config/docker_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

namespace skald {
namespace {

ContainerInfo Info() {
  ContainerInfo i;
  i.container_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  i.container_name = "/web-1";
  i.container_image_id = "sha256:fedcba9876543210fedcba9876543210";
  i.container_image_name = "busybox:local";
  i.container_entrypoint = "sh";
  i.container_args = {"-c", "echo hi"};
  i.daemon_name = "docker";
  return i;
}

std::string Render(std::string_view t) { return DockerTemplate::Parse(t).Render(Info(), "host1"); }

TEST(DockerTemplate, RendersDockerFields) {
  EXPECT_EQ(Render("{{.Name}}"), "web-1");
  EXPECT_EQ(Render("{{.ID}}"), "0123456789ab");
  EXPECT_EQ(Render("{{.FullID}}").size(), 64u);
  EXPECT_EQ(Render("{{.ImageID}}"), "fedcba987654");
  EXPECT_EQ(Render("{{.ImageName}}"), "busybox:local");
  EXPECT_EQ(Render("{{.Command}}"), "sh -c echo hi");
  EXPECT_EQ(Render("{{.DaemonName}}/{{.Hostname}}"), "docker/host1");
  EXPECT_EQ(Render("plain"), "plain");
}

TEST(DockerTemplate, FunctionsAndPipes) {
  EXPECT_EQ(Render("{{upper .Name}}"), "WEB-1");
  EXPECT_EQ(Render("{{.Name | upper}}"), "WEB-1");
  EXPECT_EQ(Render("{{title \"hello world\"}}"), "Hello World");
  EXPECT_EQ(Render("{{truncate .ID 4}}"), "0123");
  EXPECT_EQ(Render("{{join (split .Name \"-\") \"_\"}}"), "web_1");
  EXPECT_EQ(Render("{{json .Name}}"), "\"web-1\"");
  EXPECT_EQ(Render("{{pad .Name 1 2}}"), " web-1  ");
  EXPECT_EQ(Render("a {{- \" b \" -}} c"), "a b c");
}

TEST(DockerTemplate, ErrorsQuoteTheTemplateAndTheProblem) {
  auto error = [](std::string_view t) {
    try {
      DockerTemplate::Parse(t);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error("{{.Nmae}}"), ::testing::HasSubstr("unknown field .Nmae"));
  EXPECT_THAT(error("{{shout .Name}}"), ::testing::HasSubstr("function \"shout\" not defined"));
  EXPECT_THAT(error("{{.Name"), ::testing::HasSubstr("unclosed action"));
  EXPECT_THAT(error("x {{.Name"), ::testing::HasSubstr("template \"x {{.Name\""));
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
  EXPECT_EQ(error("{{pad .Name 2000000000 0}}", Info()),
            "template \"{{pad .Name 2000000000 0}}\": pad of 2000000000 and 0 spaces would be "
            "longer than 1048576 bytes");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  // Docker accepts "2000000000" as a container name: numbers from fields are bounded alike.
  ContainerInfo numeric = Info();
  numeric.container_name = "/2000000000";
  EXPECT_THAT(error("{{pad .Name .Name .Name}}", numeric),
              ::testing::HasSubstr("would be longer than 1048576 bytes"));
  EXPECT_THAT(error("{{pad .Name 600000 0}}{{pad .Name 600000 0}}", Info()),
              ::testing::HasSubstr("the output would be longer than 1048576 bytes"));
  EXPECT_THAT(error("{{join (split .FullID \"\") (pad \"\" 20000 0)}}", Info()),
              ::testing::HasSubstr("the join would be longer than 1048576 bytes"));
  EXPECT_EQ(Render("{{pad .Name 1048571 0}}").size(), 1048576u);
}

}  // namespace
}  // namespace skald
