#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/platform/os_random.h"

namespace bulwark {

bool OsRandomBytes(void* out, size_t length) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  auto* bytes = static_cast<unsigned char*>(out);
  size_t done = 0;
  while (done < length) {
    ssize_t n = read(fd, bytes + done, length - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  return done == length;
}

}  // namespace bulwark
