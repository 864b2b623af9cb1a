#include "plugin/loki/http_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "plugin/loki/http_response_reader.h"
#include "plugin/loki/name_resolver.h"
#include "plugin/loki/socks5_handshake.h"

namespace skald {
namespace {

// The longest single poll(): a Cut() also shuts the socket down, which wakes it at once; this
// only bounds how late a cut that came before the socket existed is seen.
constexpr std::chrono::milliseconds kPollSlice{200};
constexpr std::size_t kReadChunk = 16 * 1024;

bool IsIpAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string HostPort(const std::string& host, int port) {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

// The most recent OpenSSL error queued for this thread, as text ("" when none); clears them.
std::string OpenSslError() {
  unsigned long last = 0;
  while (unsigned long e = ERR_get_error()) last = e;
  if (last == 0) return "";
  char buf[256];
  ERR_error_string_n(last, buf, sizeof(buf));
  return buf;
}

// A BIO over the socket that writes with MSG_NOSIGNAL: a peer that closed its end makes the
// write fail with EPIPE instead of raising SIGPIPE in whatever process links the plugin.
int SocketBioWrite(BIO* bio, const char* data, int n) {
  BIO_clear_retry_flags(bio);
  const ssize_t w = ::send(static_cast<int>(BIO_get_fd(bio, nullptr)), data,
                           static_cast<std::size_t>(n), MSG_NOSIGNAL);
  if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    BIO_set_retry_write(bio);
  }
  return static_cast<int>(w);
}

const BIO_METHOD* NoSignalSocketBio() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_TYPE_SOCKET | BIO_get_new_index(), "skald socket");
    const BIO_METHOD* base = BIO_s_socket();
    BIO_meth_set_write(m, SocketBioWrite);
    BIO_meth_set_read(m, BIO_meth_get_read(base));
    BIO_meth_set_puts(m, BIO_meth_get_puts(base));
    BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(base));
    BIO_meth_set_create(m, BIO_meth_get_create(base));
    BIO_meth_set_destroy(m, BIO_meth_get_destroy(base));
    return m;
  }();
  return method;
}

// A BIO whose bytes are the application data of another TLS session (HttpConnection::TlsTunnel):
// the endpoint's TLS records travel inside the https proxy's. A side that must wait says so with
// the BIO's retry flags, and which way the proxy's socket must wait in the tunnel's `want`.
using TlsTunnel = HttpConnection::TlsTunnel;

int TunnelBioIo(BIO* bio, char* data, int n, bool write) {
  BIO_clear_retry_flags(bio);
  auto* tunnel = static_cast<TlsTunnel*>(BIO_get_data(bio));
  errno = 0;
  const int r = write ? SSL_write(tunnel->outer, data, n) : SSL_read(tunnel->outer, data, n);
  if (r > 0) return r;
  const int e = SSL_get_error(tunnel->outer, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    tunnel->want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
    if (write) {
      BIO_set_retry_write(bio);
    } else {
      BIO_set_retry_read(bio);
    }
    return -1;
  }
  // The proxy's session ended (close_notify, or the connection closed without one; a reset,
  // with errno set, is a failure as on a direct connection).
  if (e == SSL_ERROR_ZERO_RETURN ||
      (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && errno == 0)) {
    tunnel->eof = true;
    return 0;
  }
  return -1;
}

int TunnelBioWrite(BIO* bio, const char* data, int n) {
  return TunnelBioIo(bio, const_cast<char*>(data), n, /*write=*/true);
}
int TunnelBioRead(BIO* bio, char* data, int n) { return TunnelBioIo(bio, data, n, false); }

long TunnelBioCtrl(BIO* bio, int cmd, long, void*) {
  if (cmd == BIO_CTRL_FLUSH) return 1;
  if (cmd == BIO_CTRL_EOF) return static_cast<TlsTunnel*>(BIO_get_data(bio))->eof ? 1 : 0;
  return 0;
}

const BIO_METHOD* TunnelBio() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_TYPE_SOURCE_SINK | BIO_get_new_index(), "skald tls tunnel");
    BIO_meth_set_write(m, TunnelBioWrite);
    BIO_meth_set_read(m, TunnelBioRead);
    BIO_meth_set_ctrl(m, TunnelBioCtrl);
    BIO_meth_set_create(m, [](BIO* bio) {
      BIO_set_init(bio, 1);
      return 1;
    });
    BIO_meth_set_destroy(m, [](BIO*) { return 1; });  // the tunnel is the connection's
    return m;
  }();
  return method;
}

int NoPassphrase(char*, int, int, void*) { return 0; }

// The certificates in PEM text, in order (the caller frees them).
std::vector<X509*> ReadCertificates(const std::string& pem) {
  std::vector<X509*> out;
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return out;
  while (X509* x = PEM_read_bio_X509(bio, nullptr, NoPassphrase, nullptr)) out.push_back(x);
  BIO_free(bio);
  ERR_clear_error();  // the end of the text reads as an error
  return out;
}

}  // namespace

std::string BasicAuthorization(std::string_view user, std::string_view password) {
  std::string plain;
  plain.reserve(user.size() + 1 + password.size());
  plain.append(user).append(":").append(password);
  std::string out(4 * ((plain.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(plain.data()),
                                static_cast<int>(plain.size()));
  out.resize(static_cast<std::size_t>(n));
  return "Basic " + out;
}

// One exchange's view of the socket: waits that end at the deadline or at a Cut().
struct HttpConnection::Io {
  int fd = -1;
  SSL* tls = nullptr;
  // Set when `tls` runs inside the proxy's TLS: which way that session waits, which is what the
  // socket must wait for whatever `tls` asked.
  const short* tunnel_want = nullptr;
  Clock::time_point deadline;
  const std::atomic<bool>* cut = nullptr;

  // Waits until `events` on fd; kNone, kTimeout or kCut.
  Failure Wait(short events) const {
    if (tunnel_want != nullptr && *tunnel_want != 0) events = *tunnel_want;
    for (;;) {
      if (cut->load()) return Failure::kCut;
      const auto now = Clock::now();
      if (now >= deadline) return Failure::kTimeout;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      pollfd p{fd, events, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min(left, kPollSlice).count()) + 1);
      if (r > 0) return cut->load() ? Failure::kCut : Failure::kNone;
      if (r < 0 && errno != EINTR) return Failure::kRead;
    }
  }

  // Writes all of `data`. kNone, or why not (with `error`).
  // The deadline or a Cut(), looked at on every round (a peer fast enough never to make a
  // socket wait must not outlast them either).
  Failure Due() const {
    if (cut->load()) return Failure::kCut;
    return Clock::now() >= deadline ? Failure::kTimeout : Failure::kNone;
  }

  Failure WriteAll(std::string_view data, std::string* error) const {
    while (!data.empty()) {
      if (const Failure f = Due(); f != Failure::kNone) return f;
      ssize_t n = 0;
      if (tls != nullptr) {
        ERR_clear_error();
        const int w = SSL_write(tls, data.data(),
                                static_cast<int>(std::min<std::size_t>(data.size(), 1 << 30)));
        if (w <= 0) {
          const int e = SSL_get_error(tls, w);
          if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            const Failure f = Wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT);
            if (f != Failure::kNone) return f;
            continue;
          }
          *error = "TLS write failed: " + Describe(e);
          return Failure::kWrite;
        }
        n = w;
      } else {
        n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EINTR) continue;
          if (errno == EAGAIN || errno == EWOULDBLOCK) {
            const Failure f = Wait(POLLOUT);
            if (f != Failure::kNone) return f;
            continue;
          }
          *error = std::string("write failed: ") + std::strerror(errno);
          return Failure::kWrite;
        }
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return Failure::kNone;
  }

  // Reads what is there (at most `cap` bytes) into `buf`: > 0 bytes read, 0 at the peer's close,
  // -1 on failure (`*failure` says which, with `error`).
  ssize_t ReadSome(char* buf, std::size_t cap, Failure* failure, std::string* error) const {
    for (;;) {
      if (tls != nullptr) {
        ERR_clear_error();
        errno = 0;
        const int r = SSL_read(tls, buf, static_cast<int>(cap));
        if (r > 0) return r;
        const int e = SSL_get_error(tls, r);
        if (e == SSL_ERROR_ZERO_RETURN) return 0;
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
          *failure = Wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT);
          if (*failure != Failure::kNone) return -1;
          continue;
        }
        // A peer that closes without close_notify: an end, as far as the answer is concerned
        // (the reader decides whether the answer was whole). OpenSSL 3 reports it as an
        // SSL_ERROR_SSL unless SSL_OP_IGNORE_UNEXPECTED_EOF is set (it is, where known).
        if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && errno == 0) return 0;
        *failure = Failure::kRead;
        *error = "TLS read failed: " + Describe(e);
        return -1;
      }
      const ssize_t r = ::recv(fd, buf, cap, 0);
      if (r >= 0) return r;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        *failure = Wait(POLLIN);
        if (*failure != Failure::kNone) return -1;
        continue;
      }
      *failure = Failure::kRead;
      *error = std::string("read failed: ") + std::strerror(errno);
      return -1;
    }
  }

  // Reads one answer into `reader`. `*any` tells whether any byte of it came.
  Failure ReadAnswer(HttpResponseReader& reader, bool* leftover, bool* any,
                     std::string* error) const {
    char buf[kReadChunk];
    while (reader.state() == HttpResponseReader::State::kReading) {
      if (const Failure f = Due(); f != Failure::kNone) return f;
      Failure failure = Failure::kNone;
      const ssize_t n = ReadSome(buf, sizeof(buf), &failure, error);
      if (n < 0) return failure;
      if (n == 0) {
        reader.FeedEnd();
        break;
      }
      *any = true;
      const std::size_t used = reader.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
      if (used < static_cast<std::size_t>(n)) *leftover = true;
    }
    if (reader.state() == HttpResponseReader::State::kFailed) {
      *error = reader.error();
      return *any ? Failure::kBadAnswer : Failure::kRead;
    }
    return Failure::kNone;
  }

  // Writes the request and reads its answer into `reader`. A peer may answer and close before
  // taking the whole request (a proxy's 413 for a body over its limit, a 401): what it sent is
  // still read, and `*leftover` keeps the connection from being used again.
  Failure Exchange(std::string_view head, std::string_view body, HttpResponseReader& reader,
                   bool* leftover, bool* any, std::string* error) const {
    Failure failure = WriteAll(head, error);
    if (failure == Failure::kNone) failure = WriteAll(body, error);
    if (failure == Failure::kNone) return ReadAnswer(reader, leftover, any, error);
    if (failure != Failure::kWrite) return failure;
    std::string read_error;
    if (ReadAnswer(reader, leftover, any, &read_error) != Failure::kNone) return failure;
    *leftover = true;  // the request was not sent whole
    return Failure::kNone;
  }

  static std::string Describe(int ssl_error) {
    std::string text = OpenSslError();
    if (!text.empty()) return text;
    if (ssl_error == SSL_ERROR_SYSCALL && errno != 0) return std::strerror(errno);
    return ssl_error == SSL_ERROR_SYSCALL ? "the connection was closed"
                                          : "error " + std::to_string(ssl_error);
  }
};

HttpConnection::HttpConnection(HttpEndpoint endpoint) : endpoint_(std::move(endpoint)) {}

HttpConnection::~HttpConnection() {
  Close();
  if (tls_ctx_ != nullptr) SSL_CTX_free(tls_ctx_);
}

void HttpConnection::Cut() {
  absl::MutexLock lock(&fd_mu_);
  cut_.store(true);
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void HttpConnection::Close() {
  if (tls_ != nullptr) {
    SSL_free(tls_);
    tls_ = nullptr;
  }
  if (proxy_tls_ != nullptr) {
    SSL_free(proxy_tls_);
    proxy_tls_ = nullptr;
  }
  tunnel_ = TlsTunnel{};
  open_ = false;
  absl::MutexLock lock(&fd_mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool HttpConnection::IdleConnectionAlive() {
  if (tls_ != nullptr && SSL_pending(tls_) > 0) return false;
  if (proxy_tls_ != nullptr && SSL_pending(proxy_tls_) > 0) return false;
  int fd = -1;
  {
    absl::MutexLock lock(&fd_mu_);
    fd = fd_;
  }
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  // Readable while idle: the peer closed it, or sent what nobody asked for.
  return ::poll(&p, 1, 0) == 0;
}

std::string HttpConnection::RequestHead(std::string_view method, std::string_view path,
                                        const Headers& headers, std::size_t body_size) const {
  const bool default_port = (endpoint_.scheme == "https" && endpoint_.port == 443) ||
                            (endpoint_.scheme == "http" && endpoint_.port == 80);
  const std::string host =
      default_port ? (endpoint_.host.find(':') != std::string::npos ? "[" + endpoint_.host + "]"
                                                                    : endpoint_.host)
                   : HostPort(endpoint_.host, endpoint_.port);
  std::string head;
  head.reserve(256);
  head.append(method).append(" ");
  const bool absolute =
      !endpoint_.proxy_host.empty() && !endpoint_.proxy_socks5 && endpoint_.scheme == "http";
  if (absolute) head.append("http://").append(host);
  head.append(path).append(" HTTP/1.1\r\n");
  bool has_host = false;
  for (const auto& [name, value] : headers) {
    if (strcasecmp(name.c_str(), "Host") == 0) has_host = true;
  }
  if (!has_host) head.append("Host: ").append(host).append("\r\n");
  for (const auto& [name, value] : headers) {
    head.append(name).append(": ").append(value).append("\r\n");
  }
  if (absolute && !endpoint_.proxy_authorization.empty()) {
    head.append("Proxy-Authorization: ").append(endpoint_.proxy_authorization).append("\r\n");
  }
  head.append("Content-Length: ").append(std::to_string(body_size)).append("\r\n\r\n");
  return head;
}

HttpConnection::Answer HttpConnection::Exchange(std::string_view method, std::string_view path,
                                                const Headers& headers, std::string_view body,
                                                Clock::time_point deadline) {
  Answer answer;
  const std::string head = RequestHead(method, path, headers, body.size());
  for (int round = 0; round < 2; ++round) {
    const bool reused = open_ && IdleConnectionAlive();
    if (open_ && !reused) Close();
    Io io;
    io.deadline = deadline;
    io.cut = &cut_;
    if (!reused) {
      answer = Answer{};
      if (!Open(io, &answer)) return answer;
    } else {
      absl::MutexLock lock(&fd_mu_);
      io.fd = fd_;
    }
    io.tls = tls_ != nullptr ? tls_ : proxy_tls_;
    io.tunnel_want = tls_ != nullptr && proxy_tls_ != nullptr ? &tunnel_.want : nullptr;
    open_ = false;  // until the answer is read whole

    std::string error;
    HttpResponseReader reader;
    bool leftover = false;
    bool any = false;
    const Failure failure = io.Exchange(head, body, reader, &leftover, &any, &error);
    if (failure != Failure::kNone) {
      Close();
      // A kept connection the peer had closed meanwhile: once more on a new one.
      const bool stale =
          reused && !any && (failure == Failure::kWrite || failure == Failure::kRead);
      if (stale) continue;
      answer = Answer{};
      answer.failure = failure;
      answer.error = failure == Failure::kTimeout ? "no complete answer before the deadline"
                     : failure == Failure::kCut   ? "cut"
                                                  : error;
      return answer;
    }
    answer = Answer{};
    answer.status = reader.status();
    answer.body = reader.body();
    answer.body_capped = reader.body_capped();
    answer.location = reader.location();
    if (reader.keeps_connection() && !leftover) {
      open_ = true;
    } else {
      Close();
    }
    return answer;
  }
  return answer;
}

bool HttpConnection::Open(Io& io, Answer* answer) {
  const bool via_proxy = !endpoint_.proxy_host.empty();
  const std::string& host = via_proxy ? endpoint_.proxy_host : endpoint_.host;
  const int port = via_proxy ? endpoint_.proxy_port : endpoint_.port;
  const std::string what = (via_proxy ? "proxy " : "") + HostPort(host, port);

  // Bounded by the request's deadline and Cut(), like every wait on the socket.
  Resolved resolved = ResolveWithin(host, port, io.deadline, io.cut);
  if (resolved.failure != Resolved::Failure::kNone) {
    // A name server that did not answer in time is a resolution failure to the log ("cannot
    // resolve HOST: no answer from the name server in time"), not a silent timeout.
    answer->failure =
        resolved.failure == Resolved::Failure::kCut ? Failure::kCut : Failure::kResolve;
    answer->error = resolved.error;
    answer->at_proxy = via_proxy;
    return false;
  }
  addrinfo* found = resolved.addresses.get();
  std::string error = "no address";
  Failure failure = Failure::kConnect;
  int addresses = 0;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) ++addresses;
  const Clock::time_point deadline = io.deadline;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next, --addresses) {
    // Each address gets its share of the time left: one that does not answer (an IPv6 route
    // that drops everything) leaves time for the next.
    io.deadline = Clock::now() + (deadline - Clock::now()) / std::max(addresses, 1);
    failure = ConnectOne(io, *a, addresses > 1, error);
    if (failure != Failure::kConnect) break;  // connected, or the deadline or a cut
  }
  io.deadline = deadline;
  if (failure != Failure::kNone) {
    answer->failure = failure;
    answer->error = failure == Failure::kConnect ? "cannot connect to " + what + ": " + error
                    : failure == Failure::kTimeout
                        ? "no connection to " + what + " before the deadline"
                        : "cut";
    answer->at_proxy = via_proxy;
    return false;
  }
  const int one = 1;
  ::setsockopt(io.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

  if (via_proxy && endpoint_.proxy_socks5 && !Socks5Tunnel(io, answer)) return false;
  // An https proxy: TLS to it first; plain http then goes to it as to an http proxy.
  if (via_proxy && endpoint_.proxy_tls && !StartTls(io, answer, /*to_proxy=*/true)) return false;
  if (endpoint_.scheme != "https") return true;
  if (via_proxy && !endpoint_.proxy_socks5 && !Tunnel(io, answer)) return false;
  return StartTls(io, answer, /*to_proxy=*/false);
}

HttpConnection::Failure HttpConnection::ConnectOne(Io& io, const addrinfo& a, bool more,
                                                   std::string& error) {
  const int fd = ::socket(a.ai_family, a.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a.ai_protocol);
  if (fd < 0) {
    error = std::strerror(errno);
    return Failure::kConnect;
  }
  {
    absl::MutexLock lock(&fd_mu_);
    fd_ = fd;
  }
  io.fd = fd;
  Failure failure = Failure::kNone;
  int rc = ::connect(fd, a.ai_addr, a.ai_addrlen);
  if (rc != 0 && errno == EINPROGRESS) {
    failure = io.Wait(POLLOUT);
    if (failure == Failure::kNone) {
      int so_error = 0;
      socklen_t len = sizeof(so_error);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
      rc = so_error == 0 ? 0 : -1;
      errno = so_error;
    } else {
      rc = -1;
    }
  }
  if (rc == 0) return Failure::kNone;
  const int connect_errno = errno;
  const bool share_over = failure == Failure::kTimeout && more;
  if (failure == Failure::kNone || share_over) failure = Failure::kConnect;
  error = share_over ? "no answer in time" : std::strerror(connect_errno);
  Close();
  io.fd = -1;
  return failure;
}

bool HttpConnection::Tunnel(Io& io, Answer* answer) {
  const std::string target = HostPort(endpoint_.host, endpoint_.port);
  std::string head = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n";
  if (!endpoint_.proxy_authorization.empty()) {
    head += "Proxy-Authorization: " + endpoint_.proxy_authorization + "\r\n";
  }
  head += "\r\n";
  std::string error;
  Failure failure = io.WriteAll(head, &error);
  HttpResponseReader reader(/*answers_connect=*/true);
  bool leftover = false;
  bool any = false;
  if (failure == Failure::kNone) failure = io.ReadAnswer(reader, &leftover, &any, &error);
  if (failure == Failure::kNone && reader.status() / 100 != 2) {
    // The proxy answered for the endpoint: its refusal is the answer (a 407 wants credentials).
    answer->status = reader.status();
    answer->body = reader.body();
    answer->body_capped = reader.body_capped();
    Close();
    return false;
  }
  if (failure == Failure::kNone && leftover) {
    failure = Failure::kBadAnswer;
    error = "the proxy sent bytes after accepting CONNECT";
  }
  if (failure != Failure::kNone) {
    answer->failure = failure;
    answer->error = "proxy tunnel to " + target + ": " +
                    (failure == Failure::kTimeout ? "no answer before the deadline" : error);
    answer->at_proxy = true;
    Close();
    return false;
  }
  return true;
}

bool HttpConnection::Socks5Tunnel(Io& io, Answer* answer) {
  Failure failure = Failure::kNone;
  std::string error;
  const Socks5Transport transport{[&](std::string_view bytes) {
                                    failure = io.WriteAll(bytes, &error);
                                    return failure == Failure::kNone;
                                  },
                                  [&](char* into, std::size_t n) {
                                    while (n > 0) {
                                      if ((failure = io.Due()) != Failure::kNone) return false;
                                      const ssize_t got = io.ReadSome(into, n, &failure, &error);
                                      if (got < 0) return false;
                                      if (got == 0) {
                                        failure = Failure::kRead;
                                        error = "the proxy closed the connection";
                                        return false;
                                      }
                                      into += got;
                                      n -= static_cast<std::size_t>(got);
                                    }
                                    return true;
                                  }};
  const Socks5Request request{endpoint_.host, endpoint_.port, endpoint_.proxy_authenticate,
                              endpoint_.proxy_user, endpoint_.proxy_password};
  const Socks5Outcome outcome = Socks5Handshake(request, transport);
  if (outcome.end == Socks5Outcome::End::kOpen) return true;
  answer->at_proxy = true;
  if (outcome.end == Socks5Outcome::End::kRefused) {
    // Like a refused connection: the endpoint cannot be reached now; the lane retries.
    answer->failure = Failure::kConnect;
    answer->error = outcome.why + " (for " + HostPort(endpoint_.host, endpoint_.port) + ")";
  } else {
    answer->failure = failure;
    answer->error =
        "socks5 proxy: " +
        (failure == Failure::kTimeout ? std::string("no answer before the deadline") : error);
  }
  Close();
  return false;
}

std::string HttpConnection::LoadTlsContext() {
  if (!endpoint_.tls_error.empty()) return endpoint_.tls_error;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return "cannot make a TLS context: " + OpenSslError();
  const auto fail = [&](const std::string& why) {
    std::string error = why + ": " + OpenSslError();
    SSL_CTX_free(ctx);
    return error;
  };
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // A write retried after a wait may come from another address (the tunnel's inner session).
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
  // A peer may not renegotiate (TLS 1.2) mid-exchange: never needed, and awkward inside a tunnel.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  if (!endpoint_.ca_pem.empty()) {
    const std::vector<X509*> cas = ReadCertificates(endpoint_.ca_pem);
    if (cas.empty()) return fail("loki-tls-ca-file " + endpoint_.ca_file + " holds no certificate");
    for (X509* ca : cas) {
      X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
      X509_free(ca);
    }
  } else {
    SSL_CTX_set_default_verify_paths(ctx);
  }
  if (!endpoint_.cert_pem.empty()) {
    const std::vector<X509*> chain = ReadCertificates(endpoint_.cert_pem);
    if (chain.empty() || SSL_CTX_use_certificate(ctx, chain[0]) != 1) {
      for (X509* c : chain) X509_free(c);
      return fail("loki-tls-cert-file " + endpoint_.cert_file + " holds no usable certificate");
    }
    X509_free(chain[0]);
    for (std::size_t i = 1; i < chain.size(); ++i) SSL_CTX_add0_chain_cert(ctx, chain[i]);
    BIO* bio =
        BIO_new_mem_buf(endpoint_.key_pem.data(), static_cast<int>(endpoint_.key_pem.size()));
    // An encrypted key is refused, never prompted for (OpenSSL's default asks the terminal).
    EVP_PKEY* key =
        bio != nullptr ? PEM_read_bio_PrivateKey(bio, nullptr, NoPassphrase, nullptr) : nullptr;
    BIO_free(bio);
    const bool key_ok = key != nullptr && SSL_CTX_use_PrivateKey(ctx, key) == 1 &&
                        SSL_CTX_check_private_key(ctx) == 1;
    EVP_PKEY_free(key);
    if (!key_ok) {
      return fail("loki-tls-key-file " + endpoint_.key_file +
                  " holds no private key (an encrypted one is not read), or not the one "
                  "of loki-tls-cert-file");
    }
  }
  SSL_CTX_set_verify(ctx, endpoint_.insecure_skip_verify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER,
                     nullptr);
  tls_ctx_ = ctx;
  return "";
}

bool HttpConnection::StartTls(Io& io, Answer* answer, bool to_proxy) {
  const auto fail = [&](Failure failure, std::string error) {
    // Inside an https proxy's tunnel, a proxy that closed it (after its 200 to CONNECT, as one
    // does that cannot reach Loki) is the proxy's failure, not Loki's TLS.
    if (!to_proxy && proxy_tls_ != nullptr && tunnel_.eof && failure != Failure::kTimeout &&
        failure != Failure::kCut) {
      failure = Failure::kRead;
      error = "the proxy closed the tunnel to " + HostPort(endpoint_.host, endpoint_.port) +
              " during the TLS handshake";
      answer->at_proxy = true;
    } else {
      answer->at_proxy = to_proxy;
    }
    answer->failure = failure;
    answer->error = std::move(error);
    Close();
    return false;
  };
  if (std::string error = tls_ctx_ == nullptr ? LoadTlsContext() : std::string(); !error.empty()) {
    return fail(Failure::kTlsSetup, error);
  }
  SSL* tls = SSL_new(tls_ctx_);
  (to_proxy ? proxy_tls_ : tls_) = tls;  // Close() frees it
  const bool tunneled = !to_proxy && proxy_tls_ != nullptr;
  BIO* bio = nullptr;
  if (tls != nullptr && tunneled) {
    tunnel_ = TlsTunnel{proxy_tls_};
    bio = BIO_new(TunnelBio());
    if (bio != nullptr) BIO_set_data(bio, &tunnel_);
  } else if (tls != nullptr) {
    bio = BIO_new(NoSignalSocketBio());
    if (bio != nullptr) BIO_set_fd(bio, io.fd, BIO_NOCLOSE);
  }
  if (bio == nullptr) return fail(Failure::kTlsSetup, "cannot start TLS: " + OpenSslError());
  SSL_set_bio(tls, bio, bio);
  // As Go's client: a configured server name is checked in the proxy's certificate too.
  const std::string& name = !endpoint_.server_name.empty() ? endpoint_.server_name
                            : to_proxy                     ? endpoint_.proxy_host
                                                           : endpoint_.host;
  // Without the name check a certificate for any name would do: a failure here ends the try.
  const bool named = IsIpAddress(name)
                         ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls), name.c_str()) == 1
                         : SSL_set_tlsext_host_name(tls, name.c_str()) == 1 &&
                               SSL_set1_host(tls, name.c_str()) == 1;
  if (!named) {
    return fail(Failure::kTlsSetup,
                "cannot set the TLS server name " + name + ": " + OpenSslError());
  }
  io.tls = tls;
  io.tunnel_want = tunneled ? &tunnel_.want : nullptr;
  const std::string whose = to_proxy ? "the proxy's" : "the server's";
  for (;;) {
    ERR_clear_error();
    const int r = SSL_connect(tls);
    if (r == 1) return true;
    const int e = SSL_get_error(tls, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      const Failure f = io.Wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT);
      if (f == Failure::kNone) continue;
      return fail(f, f == Failure::kTimeout
                         ? std::string(to_proxy ? "no TLS handshake with the proxy before the "
                                                  "deadline"
                                                : "no TLS handshake before the deadline")
                         : "cut");
    }
    const long verify = SSL_get_verify_result(tls);
    if (!endpoint_.insecure_skip_verify && verify != X509_V_OK) {
      std::string why =
          whose + " certificate did not verify: " + X509_verify_cert_error_string(verify);
      OpenSslError();
      return fail(Failure::kTlsVerify, std::move(why));
    }
    return fail(
        Failure::kTlsHandshake,
        std::string(to_proxy ? "TLS handshake with the proxy failed: " : "TLS handshake failed: ") +
            Io::Describe(e));
  }
}

}  // namespace skald
