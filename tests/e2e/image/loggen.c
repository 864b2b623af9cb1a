/* loggen: writes numbered log lines to stdout (and optionally stderr), fast.
 *
 * Used by the e2e tests inside the skald-test image. Every line carries its sequence
 * number (1..N) so a test can check order and completeness. Built static (gcc -static).
 *
 *   loggen [--lines N] [--json] [--size BYTES] [--stderr-every K] [--prefix P]
 *          [--rate LPS] [--interval-ms MS] [--line-bytes B] [--sleep SECONDS]
 *
 *   --lines N         number of lines (default 10)
 *   --json            pino-style JSON lines:
 *                     {"seq":1,"level":"info","time":<ms>,"pid":1,"hostname":"skald-test",
 *                      "context":"HttpService","msg":"P ...","traceID":"..."}  (~230 bytes)
 *                     otherwise plain: "P seq=1 level=info msg=..."
 *   --size BYTES      pad every line to at least BYTES bytes (excluding the newline)
 *   --stderr-every K  every K-th line (seq % K == 0) goes to stderr instead of stdout
 *   --prefix P        a marker put in every line (default "loggen")
 *   --rate LPS        at most LPS lines per second (default: as fast as possible)
 *   --interval-ms MS  a pause of MS milliseconds after each line (a quiet stream); with
 *                     --rate, the longer of the two waits
 *   --line-bytes B    instead of numbered lines, write ONE line of exactly B bytes
 *                     (P, then byte i is 'a' + i % 26), then a newline
 *   --sleep SECONDS   sleep this long after writing (e.g. to keep the container up)
 *   --last-marker M   after the N lines, write one extra line "M" to stdout
 *
 * Exit status 0 on success, 2 on bad usage, 1 on a write error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kBufCap = 1 << 16 };

struct out {
  int fd;
  size_t len;
  char buf[kBufCap];
};

static struct out g_stdout = {1, 0, {0}};
static struct out g_stderr = {2, 0, {0}};

static void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      _exit(1);
    }
    p += w;
    n -= (size_t)w;
  }
}

static void flush(struct out* o) {
  write_all(o->fd, o->buf, o->len);
  o->len = 0;
}

static void put(struct out* o, const char* p, size_t n) {
  if (n > kBufCap) {
    flush(o);
    write_all(o->fd, p, n);
    return;
  }
  if (o->len + n > kBufCap) flush(o);
  memcpy(o->buf + o->len, p, n);
  o->len += n;
}

static void usage(void) {
  fputs(
      "usage: loggen [--lines N] [--json] [--size BYTES] [--stderr-every K] [--prefix P]\n"
      "              [--rate LPS] [--interval-ms MS] [--line-bytes B] [--sleep SECONDS]\n"
      "              [--last-marker M]\n",
      stderr);
  exit(2);
}

static long parse_num(const char* flag, const char* v) {
  char* end = NULL;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || n < 0) {
    fprintf(stderr, "loggen: %s wants a non-negative integer, got '%s'\n", flag, v);
    exit(2);
  }
  return n;
}

static void sleep_ns(long long ns) {
  if (ns <= 0) return;
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static const char* const kLevels[] = {"info", "info", "info", "debug", "warn", "error"};
static const char* const kContexts[] = {"HttpService", "UserRepository", "AuthGuard",
                                        "CacheWarmer"};

int main(int argc, char** argv) {
  long lines = 10, size = 0, stderr_every = 0, rate = 0, line_bytes = -1, sleep_s = 0;
  long interval_ms = 0;
  int json = 0;
  const char* prefix = "loggen";
  const char* last_marker = NULL;

  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = (i + 1 < argc) ? argv[i + 1] : NULL;
    if (strcmp(a, "--json") == 0) {
      json = 1;
      continue;
    }
    if (v == NULL) usage();
    if (strcmp(a, "--lines") == 0) {
      lines = parse_num(a, v);
    } else if (strcmp(a, "--size") == 0) {
      size = parse_num(a, v);
    } else if (strcmp(a, "--stderr-every") == 0) {
      stderr_every = parse_num(a, v);
    } else if (strcmp(a, "--rate") == 0) {
      rate = parse_num(a, v);
    } else if (strcmp(a, "--interval-ms") == 0) {
      interval_ms = parse_num(a, v);
    } else if (strcmp(a, "--line-bytes") == 0) {
      line_bytes = parse_num(a, v);
    } else if (strcmp(a, "--sleep") == 0) {
      sleep_s = parse_num(a, v);
    } else if (strcmp(a, "--prefix") == 0) {
      prefix = v;
    } else if (strcmp(a, "--last-marker") == 0) {
      last_marker = v;
    } else {
      usage();
    }
    i++;
  }

  if (line_bytes >= 0) {
    /* One long line: the prefix, then 'x' up to exactly line_bytes bytes. */
    size_t plen = strlen(prefix);
    char* line = malloc((size_t)line_bytes + 1);
    if (line == NULL) return 1;
    /* 'a'..'z' by position: pieces of a wrongly split line never look alike (Loki would
     * silently merge identical entries with the same timestamp). */
    for (long i = 0; i < line_bytes; i++) line[i] = (char)('a' + i % 26);
    memcpy(line, prefix, plen < (size_t)line_bytes ? plen : (size_t)line_bytes);
    line[line_bytes] = '\n';
    write_all(1, line, (size_t)line_bytes + 1);
    free(line);
  } else {
    char line[8192];
    char pad[8192];
    memset(pad, '.', sizeof pad);
    int pid = (int)getpid();
    long long start = now_ns();
    for (long seq = 1; seq <= lines; seq++) {
      int n;
      if (json) {
        n = snprintf(line, sizeof line,
                     "{\"seq\":%ld,\"level\":\"%s\",\"time\":%lld,\"pid\":%d,\"hostname\":"
                     "\"skald-test\",\"context\":\"%s\",\"msg\":\"%s request handled GET "
                     "/api/v1/items/%ld status=200 durationMs=%ld\",\"traceID\":\"%016lx%016lx\"",
                     seq, kLevels[seq % 6], wall_ms(), pid, kContexts[seq % 4], prefix,
                     seq * 7919 % 100000, seq % 97, (unsigned long)(seq * 2654435761UL),
                     (unsigned long)(seq ^ 0x5bd1e995UL));
      } else {
        n = snprintf(line, sizeof line, "%s seq=%ld level=%s msg=request handled", prefix, seq,
                     kLevels[seq % 6]);
      }
      if (n < 0 || (size_t)n >= sizeof line - 4) n = (int)sizeof line - 4;
      /* Pad to the requested size; JSON gets a "pad" field so it stays valid. */
      long want = size > (long)sizeof line - 4 ? (long)sizeof line - 4 : size;
      if (json) {
        const char* pf = ",\"pad\":\"";
        long extra = want - n - (long)strlen(pf) - 2; /* closing "} */
        if (extra > 0) {
          memcpy(line + n, pf, strlen(pf));
          n += (int)strlen(pf);
          memcpy(line + n, pad, (size_t)extra);
          n += (int)extra;
          line[n++] = '"';
        }
        line[n++] = '}';
      } else if (want > n) {
        line[n++] = ' ';
        if (want > n) {
          memcpy(line + n, pad, (size_t)(want - n));
          n = (int)want;
        }
      }
      line[n++] = '\n';
      struct out* o = (stderr_every > 0 && seq % stderr_every == 0) ? &g_stderr : &g_stdout;
      put(o, line, (size_t)n);
      if (rate > 0) {
        flush(&g_stdout);
        flush(&g_stderr);
        long long due = start + seq * 1000000000LL / rate;
        sleep_ns(due - now_ns());
      }
      if (interval_ms > 0) {
        flush(&g_stdout);
        flush(&g_stderr);
        sleep_ns(interval_ms * 1000000LL);
      }
    }
  }
  if (last_marker != NULL) {
    put(&g_stdout, last_marker, strlen(last_marker));
    put(&g_stdout, "\n", 1);
  }
  flush(&g_stdout);
  flush(&g_stderr);
  if (sleep_s > 0) sleep_ns(sleep_s * 1000000000LL);
  return 0;
}
