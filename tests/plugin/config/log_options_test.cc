#include "plugin/config/log_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages/go/go_duration.h"

namespace skald {
namespace {

using ::testing::HasSubstr;

const std::string kUrl = "http://127.0.0.1:3100/loki/api/v1/push";

std::string ErrorOf(const std::map<std::string, std::string>& config,
                    const std::map<std::string, std::string>& env = {}) {
  try {
    ParseLogOptions(config, env);
  } catch (const OptionError& e) {
    return e.what();
  }
  return "";
}

TEST(LogOptions, DefaultsMatchTheGoDriver) {
  LogOptions o = ParseLogOptions({{"loki-url", kUrl}}, {});
  EXPECT_EQ(o.client.url, kUrl);
  EXPECT_EQ(o.client.batch_wait, std::chrono::seconds(1));
  EXPECT_EQ(o.client.batch_size_bytes, 1024u * 1024u);
  EXPECT_EQ(o.client.timeout, std::chrono::seconds(10));
  EXPECT_EQ(o.client.min_backoff, std::chrono::milliseconds(500));
  EXPECT_EQ(o.client.max_backoff, std::chrono::minutes(5));
  EXPECT_EQ(o.client.max_retries, 10);
  EXPECT_EQ(o.external_labels, "container_name={{.Name}}");
  EXPECT_EQ(o.max_line_size, 256000u);
  EXPECT_EQ(o.max_size, 20 * 1024 * 1024);
  EXPECT_EQ(o.max_file, 5);
  EXPECT_FALSE(o.tag.has_value());
}

// As in the Go driver (dskit's backoff: MaxRetries 0 = no limit), loki-retries=0 retries a batch
// until it is delivered; any other count is kept.
TEST(LogOptions, RetriesZeroMeansForever) {
  EXPECT_LT(ParseLogOptions({{"loki-url", kUrl}, {"loki-retries", "0"}}, {}).client.max_retries, 0);
  EXPECT_EQ(ParseLogOptions({{"loki-url", kUrl}, {"loki-retries", "1"}}, {}).client.max_retries, 1);
}

TEST(LogOptions, ParsesEveryKind) {
  LogOptions o = ParseLogOptions({{"loki-url", kUrl},
                                  {"loki-batch-wait", "250ms"},
                                  {"loki-batch-size", "4096"},
                                  {"loki-retries", "3"},
                                  {"loki-tenant-id", "team-a"},
                                  {"loki-tls-insecure-skip-verify", "true"},
                                  {"loki-max-line-size", "1k"},
                                  {"max-size", "-1"},
                                  {"no-file", "1"},
                                  {"tag", "{{.Name}}/{{.ID}}"},
                                  {"mode", "non-blocking"},
                                  {"max-buffer-size", "4m"},
                                  {"cache-disabled", "false"}},
                                 {});
  EXPECT_EQ(o.client.batch_wait, std::chrono::milliseconds(250));
  EXPECT_EQ(o.client.batch_size_bytes, 4096u);
  EXPECT_EQ(o.client.max_retries, 3);
  EXPECT_EQ(o.client.tenant_id, "team-a");
  EXPECT_TRUE(o.client.tls.insecure_skip_verify);
  EXPECT_EQ(o.max_line_size, 1024u);
  EXPECT_EQ(o.max_size, -1);
  EXPECT_TRUE(o.no_file);
  EXPECT_EQ(o.tag, "{{.Name}}/{{.ID}}");
}

TEST(LogOptions, MissingUrlSaysHowToSetIt) {
  std::string err = ErrorOf({});
  EXPECT_THAT(err, HasSubstr("loki-url is required"));
  EXPECT_THAT(err, HasSubstr("docker plugin set skald LOKI_URL="));
}

TEST(LogOptions, PluginWideDefaultServesAContainerWithoutUrl) {
  LogOptions o = ParseLogOptions({}, {{"loki-url", kUrl}, {"loki-batch-wait", "2s"}});
  EXPECT_EQ(o.client.url, kUrl);
  EXPECT_EQ(o.client.batch_wait, std::chrono::seconds(2));
}

TEST(LogOptions, ContainerOptionWinsOverPluginWideDefault) {
  LogOptions o = ParseLogOptions({{"loki-url", kUrl}, {"loki-batch-wait", "3s"}},
                                 {{"loki-url", "http://other:1/x"}, {"loki-batch-wait", "2s"}});
  EXPECT_EQ(o.client.url, kUrl);
  EXPECT_EQ(o.client.batch_wait, std::chrono::seconds(3));
}

TEST(LogOptions, UnknownOptionSuggestsTheClosest) {
  std::string err = ErrorOf({{"loki-urll", kUrl}});
  EXPECT_THAT(err, HasSubstr("unknown log-opt 'loki-urll'"));
  EXPECT_THAT(err, HasSubstr("did you mean 'loki-url'?"));
}

TEST(LogOptions, UnknownOptionFarFromAnyHasNoSuggestion) {
  std::string err = ErrorOf({{"loki-url", kUrl}, {"colour", "blue"}});
  EXPECT_THAT(err, HasSubstr("unknown log-opt 'colour'"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("did you mean")));
}

TEST(LogOptions, EveryProblemIsReportedAtOnce) {
  // A user fixing a compose file sees every typo and bad value in one try, not one per try.
  try {
    ParseLogOptions({{"loki-url", kUrl},
                     {"loki-batch-sise", "1"},
                     {"loki-retires", "3"},
                     {"loki-batch-wait", "2 seconds"}},
                    {});
    FAIL() << "bad options accepted";
  } catch (const OptionError& e) {
    ASSERT_EQ(e.problems().size(), 3u) << e.what();
    std::string all = e.what();
    EXPECT_THAT(all, HasSubstr("'loki-batch-sise' (did you mean 'loki-batch-size'?)"));
    EXPECT_THAT(all, HasSubstr("'loki-retires' (did you mean 'loki-retries'?)"));
    EXPECT_THAT(all, HasSubstr("loki-batch-wait"));
    EXPECT_THAT(all, HasSubstr("2 seconds"));
    EXPECT_EQ(all.rfind("skald: ", 0), 0u);
    EXPECT_EQ(all.find("skald: ", 1), std::string::npos) << "one prefix, not one per problem";
    for (const std::string& p : e.problems()) EXPECT_EQ(p.rfind("skald: ", 0), std::string::npos);
  }
}

// Each row's range (max-file 1 or more, loki-batch-size positive, ...) is checked with its
// kind, so an out-of-range value is reported with every other bad value.
TEST(LogOptions, OutOfRangeValuesAreReportedWithTheOthers) {
  try {
    ParseLogOptions({{"loki-url", kUrl},
                     {"max-file", "0"},
                     {"loki-batch-size", "0"},
                     {"loki-batch-wait", "soon"}},
                    {});
    FAIL() << "bad options accepted";
  } catch (const OptionError& e) {
    ASSERT_EQ(e.problems().size(), 3u) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("'0' for log-opt max-file: expected 1 or more"));
    EXPECT_THAT(e.what(), HasSubstr("'0' for log-opt loki-batch-size: expected a positive byte"));
    EXPECT_THAT(e.what(), HasSubstr("'soon' for log-opt loki-batch-wait"));
  }
}

TEST(LogOptions, EveryOptionButTheDaemonsOwnHasAPlaceForItsValue) {
  for (const OptionSpec& s : AllOptionSpecs()) {
    const bool daemons =
        s.name == "mode" || s.name == "max-buffer-size" || s.name.rfind("cache-", 0) == 0;
    EXPECT_EQ(s.store == nullptr, daemons) << s.name;
  }
}

TEST(LogOptions, BadValuesNameTheOptionAndValue) {
  struct Case {
    std::string option, value, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"loki-batch-wait", "fast", "a duration"},
           {"loki-timeout", "10", "a duration"},
           {"loki-batch-size", "big", "a whole number"},
           {"loki-batch-size", "0", "a positive byte count"},
           {"loki-timeout", "0s", "1ms or more"},
           {"loki-max-line-size", "65m", "a size from 1 byte to 64m"},
           {"loki-retries", "-2", "0 (retry forever) or more"},
           {"loki-tls-insecure-skip-verify", "yes", "true or false"},
           {"no-file", "maybe", "true or false"},
           {"max-size", "20 parsecs", "a size"},
           {"max-file", "0", "1 or more"},
           {"mode", "sometimes", "one of blocking|non-blocking"},
           {"labels-regex", "([a-z", "a valid regular expression"},
           {"tag", "{{.Nmae}}", "can't evaluate field Nmae in type *logger.Info"},
           {"loki-external-labels", "job", "name=value pairs"},
           {"loki-external-labels", "9job=x", "'9job' is not one"},
           {"loki-proxy-url", "ftp://proxy", "an http://, https:// or socks5:// URL"},
           {"loki-proxy-url", "ftp://proxy", "expected http, https, socks5 or socks5h"},
           {"loki-proxy-url", "https://proxy:99999", "port 99999 outside 1-65535"},
       }) {
    std::map<std::string, std::string> config{{"loki-url", kUrl}, {c.option, c.value}};
    std::string err = ErrorOf(config);
    EXPECT_THAT(err, HasSubstr("'" + c.value + "'")) << c.option;
    EXPECT_THAT(err, HasSubstr("log-opt " + c.option)) << c.option;
    EXPECT_THAT(err, HasSubstr(c.expect)) << c.option;
  }
}

TEST(LogOptions, BadUrlIsRedactedInTheMessage) {
  std::string err = ErrorOf({{"loki-url", "htp://user:secret@host/x"}});
  EXPECT_THAT(err, HasSubstr("log-opt loki-url"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("secret")));
}

// The option check and the Loki client parse URLs with one parser: what one accepts the other
// does, and neither shows the password of a URL it refuses.
// Every proxy scheme the Go driver's client takes: http, https (TLS to the proxy), socks5.
TEST(LogOptions, ProxyUrlsOfEverySchemeGoTakesAreAccepted) {
  for (const std::string proxy : {"http://proxy:3128", "https://ops:pw@proxy:8443", "https://proxy",
                                  "socks5://proxy", "socks5h://u:p@proxy:1080"}) {
    LokiClientConfig c;
    c.url = kUrl;
    c.proxy_url = proxy;
    EXPECT_EQ(ValidateLokiClientConfig(c), "") << proxy;
    EXPECT_EQ(ErrorOf({{"loki-url", kUrl}, {"loki-proxy-url", proxy}}), "") << proxy;
  }
}

TEST(LogOptions, UrlCheckAgreesWithTheClient) {
  for (const std::string url : {
           "http://ceo:S3cr3t/Pa55==@127.0.0.1:3100/loki/api/v1/push",
           "http://ceo:S3cr3t#Pa55@127.0.0.1:3100/loki/api/v1/push",
           "http://ceo:S3cr3t?Pa55@127.0.0.1:3100/loki/api/v1/push",
           "https://[::1]:3100/loki/api/v1/push",
       }) {
    LokiClientConfig c;
    c.url = url;
    ASSERT_EQ(ValidateLokiClientConfig(c), "") << url;
    EXPECT_EQ(ErrorOf({{"loki-url", url}}), "") << url;
  }
  for (const std::string url : {
           "http://ceo:S3cr3t/Pa55==@127.0.0.1:99999/loki/api/v1/push",
           "http://ceo:S3cr3t/Pa55==@/loki/api/v1/push",
           "http://loki:3100/a b",
           "http://lo ki:3100/x",
       }) {
    LokiClientConfig c;
    c.url = url;
    EXPECT_NE(ValidateLokiClientConfig(c), "") << url;
    const std::string err = ErrorOf({{"loki-url", url}});
    EXPECT_THAT(err, HasSubstr("log-opt loki-url")) << url;
    EXPECT_THAT(err, ::testing::Not(HasSubstr("S3cr3t"))) << url;
    EXPECT_THAT(err, ::testing::Not(HasSubstr("Pa55"))) << url;
  }
}

TEST(LogOptions, InvalidTenantIsRefused) {
  const std::string err =
      ErrorOf({{"loki-url", kUrl}, {"loki-tenant-id", "acme\r\nX-Injected: yes"}});
  EXPECT_THAT(err, HasSubstr("log-opt loki-tenant-id"));
  EXPECT_THAT(err, HasSubstr("acme\\r\\nX-Injected: yes"));  // shown escaped
  EXPECT_THAT(err, HasSubstr("at most 150"));
  EXPECT_EQ(ErrorOf({{"loki-url", kUrl}, {"loki-tenant-id", "team-a"}}), "");
}

TEST(LogOptions, StageFileAndInlineStagesAreExclusive) {
  std::string err = ErrorOf({{"loki-url", kUrl},
                             {"loki-pipeline-stages", "- json: {}"},
                             {"loki-pipeline-stage-file", "/p.yaml"}});
  EXPECT_THAT(err, HasSubstr("only one of"));
}

// The Loki client's check (ValidateLokiClientConfig) is the one that pairs them.
TEST(LogOptions, CertificateWithoutKeyIsRefused) {
  const std::string err = ErrorOf({{"loki-url", kUrl}, {"loki-tls-cert-file", "/c.pem"}});
  EXPECT_THAT(err, HasSubstr("log-opt loki-tls-cert-file and loki-tls-key-file"));
  EXPECT_THAT(err, HasSubstr("give both or neither"));
  EXPECT_EQ(
      ErrorOf(
          {{"loki-url", kUrl}, {"loki-tls-cert-file", "/c.pem"}, {"loki-tls-key-file", "/k.pem"}}),
      "");
}

TEST(LogOptions, MinBackoffAboveMaxIsRefused) {
  std::string err =
      ErrorOf({{"loki-url", kUrl}, {"loki-min-backoff", "10s"}, {"loki-max-backoff", "1s"}});
  EXPECT_THAT(err, HasSubstr("loki-min-backoff (10s) must not exceed loki-max-backoff (1s)"));
}

// Durations are Go's (pipeline_stages/go/go_duration.h): a fraction of a nanosecond is truncated,
// as time.ParseDuration does, where this parser used to round.
TEST(LogOptions, DurationsAreGos) {
  EXPECT_EQ(
      ParseLogOptions({{"loki-url", kUrl}, {"loki-batch-wait", "1m30s"}}, {}).client.batch_wait,
      std::chrono::seconds(90));
  // 1999999.9999ns: Go reads 1999999ns (1ms once in milliseconds); rounding made it 2ms.
  EXPECT_EQ(ParseLogOptions({{"loki-url", kUrl}, {"loki-batch-wait", "1.9999999999ms"}}, {})
                .client.batch_wait,
            std::chrono::milliseconds(1));
  EXPECT_EQ(ParseLogOptions({{"loki-url", kUrl}, {"loki-timeout", "1.5h"}}, {}).client.timeout,
            std::chrono::minutes(90));
  EXPECT_EQ(stages::ParseGoDuration("1.5ns"), 1);  // rounded to 2 before
  EXPECT_THAT(ErrorOf({{"loki-url", kUrl}, {"loki-batch-wait", "5"}}), HasSubstr("a duration"));
  EXPECT_THAT(ErrorOf({{"loki-url", kUrl}, {"loki-batch-wait", "1d"}}), HasSubstr("a duration"));
}

TEST(LogOptions, DockerSizes) {
  EXPECT_EQ(ParseDockerSize("20m"), 20 * 1024 * 1024);
  EXPECT_EQ(ParseDockerSize("1g"), 1024LL * 1024 * 1024);
  EXPECT_EQ(ParseDockerSize("512k"), 512 * 1024);
  EXPECT_EQ(ParseDockerSize("100"), 100);
  EXPECT_EQ(ParseDockerSize("10MiB"), 10 * 1024 * 1024);
  EXPECT_FALSE(ParseDockerSize("ten"));
  // go-units parses a float64: these decimals round to 1024 there (an 80-bit or 128-bit long
  // double kept them below, giving 1048575).
  EXPECT_EQ(ParseDockerSize("1023.9999999999999999k"), 1024 * 1024);
  EXPECT_EQ(ParseDockerSize("0.1k"), 102);
}

TEST(LogOptions, CredentialsNeverAppearInErrors) {
  std::string err =
      ErrorOf({{"loki-url", "http://user:secret@loki:3100/x"}, {"loki-batch-wait", "fast"}});
  EXPECT_THAT(err, HasSubstr("loki-batch-wait"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("secret")));
}

TEST(LogOptions, EnvNames) { EXPECT_EQ(OptionEnvName("loki-batch-wait"), "LOKI_BATCH_WAIT"); }

TEST(LogOptions, MarkdownTableListsEveryOption) {
  std::string table = OptionsMarkdownTable();
  for (const OptionSpec& s : AllOptionSpecs()) {
    EXPECT_THAT(table, HasSubstr("`" + std::string(s.name) + "`"));
  }
}

TEST(LogOptions, CredentialsOptionsReachTheClientAndAreNeverEchoed) {
  LogOptions o = ParseLogOptions({{"loki-url", "http://127.0.0.1:3100/loki/api/v1/push"},
                                  {"loki-basic-auth-username", "team"},
                                  {"loki-basic-auth-password-file", "/var/lib/skald/files/pw"},
                                  {"loki-headers", "X-Api-Key=abc=def,X-Team=a"}},
                                 {});
  EXPECT_EQ(o.client.auth.basic_username, "team");
  EXPECT_EQ(o.client.auth.basic_password_file, "/var/lib/skald/files/pw");
  ASSERT_EQ(o.client.headers.size(), 2u);
  EXPECT_EQ(o.client.headers[0], (std::pair<std::string, std::string>{"X-Api-Key", "abc=def"}));
  try {
    ParseLogOptions({{"loki-url", "http://127.0.0.1:3100/loki/api/v1/push"},
                     {"loki-bearer-token", "tok-en-secret"},
                     {"loki-basic-auth-username", "team"},
                     {"loki-basic-auth-password-file", "/pw"}},
                    {});
    FAIL() << "two ways to authenticate were accepted";
  } catch (const OptionError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("one way to authenticate"));
    EXPECT_THAT(e.what(), ::testing::Not(::testing::HasSubstr("tok-en-secret")));
  }
  try {
    ParseLogOptions({{"loki-url", "http://127.0.0.1:3100/loki/api/v1/push"},
                     {"loki-headers", "secret-without-name"}},
                    {});
    FAIL() << "a header without a name was accepted";
  } catch (const OptionError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("loki-headers"));
  }
}

// A secret-bearing option's value is never repeated by its refusal, whatever shape the mistake
// takes: only the option and what it expects.
TEST(LogOptions, RefusalsOfSecretBearingOptionsNeverRepeatTheirValue) {
  const std::string url = "http://127.0.0.1:3100/loki/api/v1/push";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"loki-headers", "X-Api-Key: s3cr3t"},
      {"loki-headers", "X-Team=a,X-Api-Key: s3cr3t"},
      {"loki-headers", "=s3cr3t"},
      {"loki-headers", "X-Api-Key:s3cr3t=x"},
      {"loki-headers", "X-Api-Key s3cr3t=x"},
      {"loki-headers", "Proxy-Authorization=Basic s3cr3t"},
      {"loki-url", "http://user:s3cr3t@127.0.0.1:notaport/loki/api/v1/push"},
      {"loki-proxy-url", "ftp://user:s3cr3t@proxy:3128"},
  };
  for (const auto& [option, value] : cases) {
    std::map<std::string, std::string> opts = {{"loki-url", url}};
    opts[option] = value;
    try {
      ParseLogOptions(opts, {});
      ADD_FAILURE() << option << "=" << value << " was accepted";
    } catch (const OptionError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(option)) << value;
      EXPECT_THAT(e.what(), ::testing::Not(::testing::HasSubstr("s3cr3t"))) << e.what();
    }
  }
}

}  // namespace
}  // namespace skald
