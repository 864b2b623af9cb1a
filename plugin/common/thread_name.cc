#include "plugin/common/thread_name.h"

#include <pthread.h>

#include <cstring>

namespace skald {

void SetThreadName(const char* name) {
  char truncated[16];
  std::strncpy(truncated, name, sizeof truncated - 1);
  truncated[sizeof truncated - 1] = '\0';
  pthread_setname_np(pthread_self(), truncated);  // best effort: a name is only a help
}

}  // namespace skald
