#include "plugin/config/container_labels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skald {
namespace {

std::map<std::string, std::string> AsMap(const StreamLabelSet& s) {
  return std::map<std::string, std::string>(s.begin(), s.end());
}

ContainerInfo Info() {
  ContainerInfo i;
  i.container_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  i.container_name = "/api";
  i.container_labels = {{"com.docker.compose.service", "web"},
                        {"com.docker.compose.project", "shop"},
                        {"com.docker.swarm.service.name", "svc"},
                        {"com.docker.stack.namespace", "stack"},
                        {"team.name", "payments"},
                        {"tier", "backend"}};
  i.container_env = {"APP_ENV=prod", "APP-REGION=eu", "SECRET=x"};
  return i;
}

TEST(ContainerLabels, DefaultsAreContainerNameHostAndDockerLabels) {
  LogOptions o = ParseLogOptions({{"loki-url", "http://l/x"}}, {});
  auto m = AsMap(BuildContainerLabels(Info(), o, "node1"));
  EXPECT_EQ(m["container_name"], "api");
  EXPECT_EQ(m["host"], "node1");
  EXPECT_EQ(m["compose_service"], "web");
  EXPECT_EQ(m["compose_project"], "shop");
  EXPECT_EQ(m["swarm_service"], "svc");
  EXPECT_EQ(m["swarm_stack"], "stack");
  EXPECT_EQ(m.count("filename"), 0u);
  EXPECT_EQ(m.count("tag"), 0u);
  EXPECT_EQ(m.size(), 6u);
}

TEST(ContainerLabels, LabelsEnvAndRegexesBecomeLabelsWithUnderscores) {
  LogOptions o = ParseLogOptions({{"loki-url", "http://l/x"},
                                  {"labels", "team.name,missing"},
                                  {"labels-regex", "^ti"},
                                  {"env", "APP-REGION"},
                                  {"env-regex", "^APP_"}},
                                 {});
  auto m = AsMap(BuildContainerLabels(Info(), o, "node1"));
  EXPECT_EQ(m["team_name"], "payments");
  EXPECT_EQ(m["tier"], "backend");
  EXPECT_EQ(m["APP_REGION"], "eu");
  EXPECT_EQ(m["APP_ENV"], "prod");
  EXPECT_EQ(m.count("SECRET"), 0u);
  EXPECT_EQ(m.count("missing"), 0u);
}

TEST(ContainerLabels, ExternalLabelsAndTagAreTemplates) {
  LogOptions o = ParseLogOptions({{"loki-url", "http://l/x"},
                                  {"loki-external-labels", "job=docker,svc={{.Name}}-{{.ID}}"},
                                  {"tag", "{{.ImageName}}"}},
                                 {});
  ContainerInfo info = Info();
  info.container_image_name = "busybox:local";
  auto m = AsMap(BuildContainerLabels(info, o, "node1"));
  EXPECT_EQ(m["job"], "docker");
  EXPECT_EQ(m["svc"], "api-0123456789ab");
  EXPECT_EQ(m["tag"], "busybox:local");
  EXPECT_EQ(m.count("container_name"), 0u);  // replaced by the user's external labels
}

// What a Go driver user writes: Go's text/template over Docker's logger.Info.
TEST(ContainerLabels, ExternalLabelsReadContainerLabelsAndEnvironmentLikeTheGoDriver) {
  LogOptions o = ParseLogOptions(
      {{"loki-url", "http://l/x"},
       {"loki-external-labels",
        "team={{index .ContainerLabels \"team\"}},tier={{if eq .Name \"api\"}}front{{else}}"
        "back{{end}}"},
       {"tag", "{{printf \"%s/%d\" .Name (len .ContainerEnv)}}"}},
      {});
  ContainerInfo info = Info();
  info.container_labels["team"] = "payments";
  auto m = AsMap(BuildContainerLabels(info, o, "node1"));
  EXPECT_EQ(m["team"], "payments");
  EXPECT_EQ(m["tier"], "front");
  EXPECT_EQ(m["tag"], "api/" + std::to_string(info.container_env.size()));
}

// A template Go fails on this container refuses it, naming the option and Go's reason.
TEST(ContainerLabels, ATemplateThatFailsOnTheContainerRefusesItNamingTheOption) {
  LogOptions o = ParseLogOptions(
      {{"loki-url", "http://l/x"}, {"loki-external-labels", "arg={{index .ContainerArgs 3}}"}}, {});
  try {
    BuildContainerLabels(Info(), o, "node1");
    ADD_FAILURE() << "rendered";
  } catch (const OptionError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("skald: invalid log-opt loki-external-labels: "
                                               "template \"{{index .ContainerArgs 3}}\": "));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("error calling index: index out of range: 3"));
  }
}

}  // namespace
}  // namespace skald
