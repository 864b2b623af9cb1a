#include "pipeline_stages/relabel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages/common/config_error.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;

LabelSet Base() {
  return LabelSet{{"container_name", "web-1"}, {"host", "h1"}, {"compose_service", "Web"}};
}

std::string ErrorOf(std::string_view yaml) {
  try {
    RelabelConfig::FromYaml(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Relabel, ReplaceWithGroupsSetsTarget) {
  auto c = RelabelConfig::FromYaml(R"(
- source_labels: [container_name]
  regex: '(\w+)-(\d+)'
  target_label: app
  replacement: '${1}_$2'
)");
  LabelSet l = Base();
  ASSERT_TRUE(c.Apply(l));
  EXPECT_EQ(l.Get("app"), "web_1");
}

TEST(Relabel, ReplaceRegexIsFullyAnchored) {
  auto c = RelabelConfig::FromYaml(R"(
- {source_labels: [container_name], regex: 'web', target_label: app}
)");
  LabelSet l = Base();
  ASSERT_TRUE(c.Apply(l));
  EXPECT_FALSE(l.Contains("app"));
}

TEST(Relabel, ReplaceEmptyResultDeletesTarget) {
  auto c = RelabelConfig::FromYaml(R"(
- {source_labels: [missing], target_label: host}
)");
  LabelSet l = Base();
  ASSERT_TRUE(c.Apply(l));
  EXPECT_FALSE(l.Contains("host"));
}

TEST(Relabel, DollarNameTakesLongestIdentifierLikeGo) {
  auto c = RelabelConfig::FromYaml(R"(
- {source_labels: [host], regex: '(.*)', target_label: x, replacement: '$1_suffix'}
- {source_labels: [host], regex: '(.*)', target_label: y, replacement: '${1}_suffix'}
)");
  LabelSet l = Base();
  ASSERT_TRUE(c.Apply(l));
  EXPECT_FALSE(l.Contains("x"));  // "$1_suffix" names group "1_suffix": empty
  EXPECT_EQ(l.Get("y"), "h1_suffix");
}

TEST(Relabel, SeparatorJoinsSources) {
  auto c = RelabelConfig::FromYaml(R"(
- {source_labels: [host, container_name], separator: '/', target_label: path}
)");
  LabelSet l = Base();
  ASSERT_TRUE(c.Apply(l));
  EXPECT_EQ(l.Get("path"), "h1/web-1");
}

TEST(Relabel, KeepDropsStreamsThatDoNotMatch) {
  auto c = RelabelConfig::FromYaml("- {action: keep, source_labels: [host], regex: h2}");
  LabelSet l = Base();
  EXPECT_FALSE(c.Apply(l));
}

TEST(Relabel, DropDropsMatchingStreams) {
  auto c = RelabelConfig::FromYaml("- {action: drop, source_labels: [host], regex: 'h.*'}");
  LabelSet l = Base();
  EXPECT_FALSE(c.Apply(l));
  auto keep = RelabelConfig::FromYaml("- {action: drop, source_labels: [host], regex: 'x'}");
  LabelSet l2 = Base();
  EXPECT_TRUE(keep.Apply(l2));
}

TEST(Relabel, LabelMapCopiesMatchingNames) {
  auto c = RelabelConfig::FromYaml("- {action: labelmap, regex: 'compose_(.*)'}");
  LabelSet l = Base();
  ASSERT_TRUE(c.Apply(l));
  EXPECT_EQ(l.Get("service"), "Web");
  EXPECT_EQ(l.Get("compose_service"), "Web");
}

TEST(Relabel, LabelDropAndLabelKeep) {
  auto drop = RelabelConfig::FromYaml("- {action: labeldrop, regex: 'compose_.*|host'}");
  LabelSet l = Base();
  ASSERT_TRUE(drop.Apply(l));
  EXPECT_EQ(l.ToString(), "{container_name=\"web-1\"}");
  auto keep = RelabelConfig::FromYaml("- {action: labelkeep, regex: 'host'}");
  LabelSet l2 = Base();
  ASSERT_TRUE(keep.Apply(l2));
  EXPECT_EQ(l2.ToString(), "{host=\"h1\"}");
}

TEST(Relabel, LowercaseAndUppercase) {
  auto c = RelabelConfig::FromYaml(R"(
- {action: lowercase, source_labels: [compose_service], target_label: lower}
- {action: uppercase, source_labels: [compose_service], target_label: upper}
)");
  LabelSet l = Base();
  ASSERT_TRUE(c.Apply(l));
  EXPECT_EQ(l.Get("lower"), "web");
  EXPECT_EQ(l.Get("upper"), "WEB");
}

TEST(Relabel, LowercaseAndUppercaseMapUnicodeAsGo) {
  auto c = RelabelConfig::FromYaml(R"(
- {action: lowercase, source_labels: [name], target_label: lower}
- {action: uppercase, source_labels: [name], target_label: upper}
)");
  auto apply = [&](std::string_view name) {
    LabelSet l{{"name", std::string(name)}};
    EXPECT_TRUE(c.Apply(l));
    return std::pair{std::string(l.Get("lower").value_or("")),
                     std::string(l.Get("upper").value_or(""))};
  };
  EXPECT_EQ(apply("ÄÖÜ-äöü"), (std::pair<std::string, std::string>{"äöü-äöü", "ÄÖÜ-ÄÖÜ"}));
  EXPECT_EQ(apply("Ωmega ελληνικά"),
            (std::pair<std::string, std::string>{"ωmega ελληνικά", "ΩMEGA ΕΛΛΗΝΙΚΆ"}));
  // Go's strings.ToUpper: no "SS" for "ß"; strings.Map: each invalid byte becomes U+FFFD.
  EXPECT_EQ(apply("Straße\xff"),
            (std::pair<std::string, std::string>{"straße\uFFFD", "STRAßE\uFFFD"}));
}

TEST(Relabel, ActionIsLowerCasedAsGoDoes) {
  // Prometheus reads the action through strings.ToLower, which maps a KELVIN SIGN to "k".
  auto c = RelabelConfig::FromYaml("- {action: \"\\u212AEEP\", source_labels: [host], regex: h1}");
  LabelSet l = Base();
  EXPECT_TRUE(c.Apply(l));
  LabelSet other{{"host", "h2"}};
  EXPECT_FALSE(c.Apply(other));
}

TEST(Relabel, HashModIsStableAndBelowModulus) {
  auto c = RelabelConfig::FromYaml(
      "- {action: hashmod, source_labels: [container_name], modulus: 8, target_label: shard}");
  LabelSet a = Base(), b = Base();
  ASSERT_TRUE(c.Apply(a));
  ASSERT_TRUE(c.Apply(b));
  ASSERT_TRUE(a.Get("shard").has_value());
  EXPECT_EQ(a.Get("shard"), b.Get("shard"));
  EXPECT_LT(std::stoi(std::string(*a.Get("shard"))), 8);
}

TEST(Relabel, ActionIsCaseInsensitive) {
  auto c = RelabelConfig::FromYaml("- {action: LabelDrop, regex: host}");
  LabelSet l = Base();
  ASSERT_TRUE(c.Apply(l));
  EXPECT_FALSE(l.Contains("host"));
}

TEST(Relabel, EmptyConfigKeepsLabels) {
  auto c = RelabelConfig::FromYaml("");
  LabelSet l = Base();
  EXPECT_TRUE(c.Apply(l));
  EXPECT_EQ(l, Base());
}

TEST(RelabelErrors, UnknownActionNamesRuleAndSuggests) {
  const std::string e = ErrorOf("- {action: keep}\n- {action: replce, target_label: a}");
  EXPECT_THAT(e, HasSubstr("relabel rule 2"));
  EXPECT_THAT(e, HasSubstr("field \"action\""));
  EXPECT_THAT(e, HasSubstr("\"replce\" is not a relabel action"));
  EXPECT_THAT(e, HasSubstr("did you mean replace?"));
}

TEST(RelabelErrors, BadRegexNamesField) {
  const std::string e = ErrorOf("- {source_labels: [a], regex: '(x', target_label: b}");
  EXPECT_THAT(e, HasSubstr("relabel rule 1 (replace)"));
  EXPECT_THAT(e, HasSubstr("field \"regex\""));
  EXPECT_THAT(e, HasSubstr("\"(x\""));
}

TEST(RelabelErrors, ReplaceNeedsTargetLabel) {
  EXPECT_THAT(ErrorOf("- {source_labels: [a]}"),
              HasSubstr("field \"target_label\": is required for action replace"));
}

TEST(RelabelErrors, InvalidTargetLabel) {
  EXPECT_THAT(ErrorOf("- {source_labels: [a], target_label: 'bad-name'}"),
              HasSubstr("\"bad-name\" is not a valid label name"));
}

TEST(RelabelErrors, HashModNeedsModulus) {
  EXPECT_THAT(ErrorOf("- {action: hashmod, source_labels: [a], target_label: s}"),
              HasSubstr("field \"modulus\": is required for action hashmod"));
}

TEST(RelabelErrors, UnknownFieldSuggests) {
  EXPECT_THAT(ErrorOf("- {source_label: [a], target_label: b}"),
              HasSubstr("unknown field \"source_label\" (did you mean source_labels?)"));
}

TEST(RelabelErrors, LabelDropRejectsSourceLabels) {
  EXPECT_THAT(ErrorOf("- {action: labeldrop, source_labels: [a], regex: x}"),
              HasSubstr("field \"source_labels\": is not used by action labeldrop"));
}

TEST(RelabelErrors, NotAList) {
  EXPECT_THAT(ErrorOf("action: keep"), HasSubstr("expected a YAML list of rules"));
}

}  // namespace
}  // namespace skald::stages
