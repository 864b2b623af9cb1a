// The Go template engine's functions: sprig's paths and encodings. Declared, with the other
// families, in go_template_library.h; the function table is go_template_functions.cc's.
#include <absl/time/clock.h>
#include <openssl/rand.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include "pipeline_stages/go/go_duration.h"
#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/go/go_time_layout.h"
#include "pipeline_stages/go_template/go_template_decimal.h"
#include "pipeline_stages/go_template/go_template_fmt.h"
#include "pipeline_stages/go_template/go_template_json.h"
#include "pipeline_stages/go_template/go_template_library.h"
#include "pipeline_stages/go_template/go_template_strings.h"

namespace skald::stages::go_template_internal {

bool FnBase(Args a, CallContext& ctx, Value* r) { return SetString(ctx, PathBase(a[0].s), r); }
bool FnDir(Args a, CallContext& ctx, Value* r) { return SetString(ctx, PathDir(a[0].s), r); }
bool FnClean(Args a, CallContext& ctx, Value* r) { return SetString(ctx, PathClean(a[0].s), r); }
bool FnExt(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(PathExt(a[0].s)), r);
}
bool FnIsAbs(Args a, CallContext&, Value* r) {
  *r = Value::Bool(!a[0].s.empty() && a[0].s[0] == '/');
  return true;
}
bool FnB64enc(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, Base64Encode(a[0].s), r);
}
bool FnB64dec(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, Base64Decode(a[0].s), r);
}
bool FnB32enc(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, Base32Encode(a[0].s), r);
}
bool FnB32dec(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, Base32Decode(a[0].s), r);
}

bool FnUuidv4(Args, CallContext& ctx, Value* r) {
  unsigned char b[16];
  RAND_bytes(b, sizeof(b));
  b[6] = (b[6] & 0x0F) | 0x40;
  b[8] = (b[8] & 0x3F) | 0x80;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int k = 0; k < 16; ++k) {
    if (k == 4 || k == 6 || k == 8 || k == 10) out.push_back('-');
    out.push_back(kHex[b[k] >> 4]);
    out.push_back(kHex[b[k] & 15]);
  }
  return SetString(ctx, std::move(out), r);
}

bool FnRandBytes(Args a, CallContext& ctx, Value* r) {
  const int64_t n = a[0].i;
  if (n < 0) return ctx.Fail("runtime error: makeslice: len out of range");
  if (static_cast<uint64_t>(n) > ctx.max_bytes() / 4 * 3) return ctx.TooLong();
  std::string bytes(static_cast<size_t>(n), '\0');
  if (n > 0) RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(n));
  return SetString(ctx, Base64Encode(bytes), r);
}

bool FnFail(Args a, CallContext& ctx, Value*) { return ctx.Fail(a[0].s); }

}  // namespace skald::stages::go_template_internal
