// Fuzz target: Go templates (the template and replace stages' language) parsed and executed.
//
// Input: the template text. It runs on data holding every kind of value (strings, numbers,
// booleans, null; `.Entry` and `.Value` are the input itself, as the stages pass the line).
// Checks: a refusal is a ConfigError with a message; an execution that succeeds gives at most
// kMaxOutputBytes, one that fails says why, and executing again gives the same result (the
// same output too, unless the template names a function of the clock or of chance).
#include <cstdint>
#include <string>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/go_template/go_template.h"
#include "tests/fuzz/fuzz_support.h"

using skald::stages::GoTemplate;

namespace {

// Functions whose output depends on the clock, on chance or on the network: a template that
// names one may write something else when executed again ({{uuidv4}} always does; sprig's
// date, dateInZone and htmlDate format the current time when given no time: {{.X | date
// "05.000000000"}} with .X missing).
bool MayWriteOtherwise(std::string_view text) {
  for (const std::string_view name :
       {"rand", "shuffle", "uuidv4", "bcrypt", "htpasswd", "genPrivateKey", "genCA",
        "genSelfSigned", "genSigned", "buildCustomCert", "encryptAES", "now", "ago", "date", "Date",
        "getHostByName"}) {
    if (text.find(name) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = skald::fuzz::AsView(data, size);
  GoTemplate tmpl;
  try {
    tmpl = GoTemplate::Parse(text);
  } catch (const skald::stages::ConfigError& e) {
    FUZZ_CHECK(e.what()[0] != '\0');
    return 0;
  }
  skald::stages::MapTemplateData values;
  values.SetString("Entry", std::string(text));
  values.SetString("Value", std::string(text));
  values.SetString("level", "error");
  values.SetString("msg", "disk full \xc3\xa9 ok");
  values.SetString("empty", "");
  values.SetString("num", "42");
  values.SetInt("count", 7);
  values.SetInt("big", INT64_MAX);
  values.SetInt("neg", INT64_MIN);
  values.SetDouble("ratio", 0.5);
  values.SetDouble("huge", 1e308);
  values.SetBool("ok", true);
  values.SetNull("nothing");

  std::string out, error;
  const GoTemplate::Result result = tmpl.Execute(values, &out, &error);
  if (result == GoTemplate::Result::kOk) {
    FUZZ_CHECK(out.size() <= GoTemplate::kMaxOutputBytes);
  } else {
    FUZZ_CHECK(!error.empty());
  }
  std::string again;
  const GoTemplate copy = tmpl;
  FUZZ_CHECK(copy.Execute(values, &again) == result);
  if (result == GoTemplate::Result::kOk && !MayWriteOtherwise(text)) FUZZ_CHECK(again == out);
  FUZZ_CHECK(tmpl.source() == text);
  return 0;
}
