#include "plugin/loki/socks5_handshake.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace skald {
namespace {

using ::testing::HasSubstr;

// A proxy that answers from a script: what the client wrote is kept, what it reads comes from
// `answers`, and reading past them fails as a closed socket does.
struct ScriptedProxy {
  std::string written;
  std::string answers;
  std::size_t read_at = 0;
  std::size_t asked_beyond = 0;

  Socks5Transport Transport() {
    return {[this](std::string_view bytes) {
              written.append(bytes);
              return true;
            },
            [this](char* into, std::size_t n) {
              if (answers.size() - read_at < n) {
                asked_beyond += n;
                return false;
              }
              answers.copy(into, n, read_at);
              read_at += n;
              return true;
            }};
  }
};

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

// A request without credentials.
Socks5Request To(std::string host, int port) {
  Socks5Request r;
  r.host = std::move(host);
  r.port = port;
  return r;
}

const std::string kAcceptedWithIpv4 = Bytes({5, 0, 0, 1, 10, 0, 0, 1, 0x1F, 0x90});

TEST(Socks5Handshake, SendsTheNameForTheProxyToResolveAndReadsTheWholeReply) {
  ScriptedProxy proxy;
  proxy.answers = Bytes({5, 0}) + kAcceptedWithIpv4;
  const Socks5Outcome out = Socks5Handshake(To("loki.lan", 3100), proxy.Transport());
  EXPECT_EQ(out.end, Socks5Outcome::End::kOpen) << out.why;
  EXPECT_EQ(proxy.written,
            Bytes({5, 1, 0}) + Bytes({5, 1, 0, 3, 8}) + "loki.lan" + Bytes({0x0C, 0x1C}));
  EXPECT_EQ(proxy.read_at, proxy.answers.size()) << "the reply's bound address is consumed";
}

TEST(Socks5Handshake, AddressesAreSentAsAddresses) {
  ScriptedProxy v4;
  v4.answers = Bytes({5, 0}) + kAcceptedWithIpv4;
  ASSERT_EQ(Socks5Handshake(To("10.1.2.3", 80), v4.Transport()).end, Socks5Outcome::End::kOpen);
  EXPECT_EQ(v4.written.substr(3), Bytes({5, 1, 0, 1, 10, 1, 2, 3, 0, 80}));
  ScriptedProxy v6;
  v6.answers = Bytes({5, 0}) + kAcceptedWithIpv4;
  ASSERT_EQ(Socks5Handshake(To("::1", 443), v6.Transport()).end, Socks5Outcome::End::kOpen);
  EXPECT_EQ(v6.written.substr(3),
            Bytes({5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0xBB}));
}

TEST(Socks5Handshake, UserNameAndPasswordWhenTheProxyAsksForThem) {
  ScriptedProxy proxy;
  proxy.answers = Bytes({5, 2}) + Bytes({1, 0}) + kAcceptedWithIpv4;
  Socks5Request r{"loki.lan", 3100, true, "ceo", "S3cr3t"};
  ASSERT_EQ(Socks5Handshake(r, proxy.Transport()).end, Socks5Outcome::End::kOpen);
  EXPECT_EQ(proxy.written.substr(0, 4 + 1 + 1 + 3 + 1 + 6),
            Bytes({5, 2, 0, 2}) + Bytes({1, 3}) + "ceo" + Bytes({6}) + "S3cr3t");

  ScriptedProxy refusing;
  refusing.answers = Bytes({5, 2}) + Bytes({1, 1});
  const Socks5Outcome out = Socks5Handshake(r, refusing.Transport());
  EXPECT_EQ(out.end, Socks5Outcome::End::kRefused);
  EXPECT_EQ(out.why, "socks5 proxy: the user name and password were refused");
  EXPECT_THAT(out.why, ::testing::Not(HasSubstr("S3cr3t")));
}

TEST(Socks5Handshake, RefusalsSayWhatTheProxySaid) {
  const auto refused = [](const std::string& answers, Socks5Request r = To("loki.lan", 3100)) {
    ScriptedProxy proxy;
    proxy.answers = answers;
    const Socks5Outcome out = Socks5Handshake(r, proxy.Transport());
    EXPECT_EQ(out.end, Socks5Outcome::End::kRefused) << answers.size();
    return out.why;
  };
  EXPECT_EQ(refused(Bytes({5, 0xFF})),
            "socks5 proxy: it wants credentials: give them in loki-proxy-url "
            "(socks5://user:password@host)");
  EXPECT_EQ(refused(Bytes({5, 2})), refused(Bytes({5, 0xFF})));  // wants a password we lack
  EXPECT_EQ(refused(Bytes({5, 0xFF}), {"loki.lan", 3100, true, "u", "p"}),
            "socks5 proxy: it accepts none of the authentication methods offered");
  EXPECT_EQ(refused("HTTP/1.1 400 Bad Request\r\n\r\n"),
            "socks5 proxy: not a SOCKS5 proxy (its answer starts with byte 72)");
  EXPECT_EQ(refused(Bytes({5, 0, 5, 5, 0, 1})),
            "socks5 proxy: CONNECT refused: connection refused (5)");
  EXPECT_EQ(refused(Bytes({5, 0, 5, 2, 0, 1})),
            "socks5 proxy: CONNECT refused: connection not allowed by ruleset (2)");
  EXPECT_EQ(refused(Bytes({5, 0, 5, 200, 0, 1})),
            "socks5 proxy: CONNECT refused: unknown reply code (200)");
  EXPECT_EQ(refused(Bytes({5, 0, 5, 0, 0, 9})),
            "socks5 proxy: a reply with an unknown address type 9");
}

// What the proxy sends is read field by field: a reply that ends early fails as a closed
// socket, and a bound name is read for exactly its length, never more.
TEST(Socks5Handshake, AShortReplyIsASocketFailureAndNothingIsReadBeyondTheReply) {
  ScriptedProxy shortened;
  shortened.answers = Bytes({5, 0, 5, 0, 0, 3, 200}) + std::string(10, 'x');
  EXPECT_EQ(Socks5Handshake(To("loki.lan", 3100), shortened.Transport()).end,
            Socks5Outcome::End::kSocketFailed);
  EXPECT_EQ(shortened.asked_beyond, 202u) << "the name's 200 bytes and the port, asked at once";

  ScriptedProxy named;
  named.answers = Bytes({5, 0, 5, 0, 0, 3, 3}) + "abc" + Bytes({0, 80}) + "HTTP";
  EXPECT_EQ(Socks5Handshake(To("loki.lan", 3100), named.Transport()).end,
            Socks5Outcome::End::kOpen);
  EXPECT_EQ(named.answers.substr(named.read_at), "HTTP") << "the endpoint's bytes are left";
}

TEST(Socks5Handshake, RequestsItCannotSendAreRefusedBeforeAnyByte) {
  EXPECT_EQ(Socks5RequestError(To(std::string(256, 'a'), 80)),
            "the endpoint's host name is 1 to 255 bytes");
  EXPECT_EQ(Socks5RequestError({"loki.lan", 80, true, "", "p"}),
            "a socks5 user name is 1 to 255 bytes and its password at most 255");
  EXPECT_EQ(Socks5RequestError({"loki.lan", 80, true, "u", std::string(256, 'p')}),
            "a socks5 user name is 1 to 255 bytes and its password at most 255");
  EXPECT_EQ(Socks5RequestError({"loki.lan", 80, true, "u", "p"}), "");
  EXPECT_EQ(Socks5RequestError({"loki.lan", 80, true, "u", ""}), "") << "socks5://u@proxy";
  ScriptedProxy untouched;
  EXPECT_EQ(Socks5Handshake(To(std::string(256, 'a'), 80), untouched.Transport()).end,
            Socks5Outcome::End::kRefused);
  EXPECT_EQ(untouched.written, "");
}

}  // namespace
}  // namespace skald
