#include "core/cpu/cpu_usage_counters.h"

#include <unistd.h>

#include <string_view>

#include "core/cpu/proc_file.h"
#include "core/cpu/proc_text.h"

namespace bulwark::cgroup_internal {

bool ReadV1UsageNs(const std::string& path, uint64_t* ns, std::string* why) {
  std::string text;
  if (!ReadSmallFile(path, &text, why)) return false;
  if (ParseU64(text, ns)) return true;
  *why = path + " is not a number";
  return false;
}

bool ReadV2UsageNs(const std::string& path, uint64_t* ns, std::string* why) {
  std::string text;
  if (!ReadSmallFile(path, &text, why)) return false;
  bool found = false;
  uint64_t usec = 0;
  ForEachLineOf(text, [&](std::string_view line) {
    std::string_view key;
    if (found || !NextToken(&line, &key) || key != "usage_usec") return;
    found = ParseU64(line, &usec);
  });
  if (!found) {
    *why = path + " has no valid usage_usec line";
    return false;
  }
  if (usec > UINT64_MAX / 1000) {
    *why = path + ": usage_usec out of range";
    return false;
  }
  *ns = usec * 1000;
  return true;
}

bool ReadHostTimesNs(const std::string& path, uint64_t* busyNs, uint64_t* totalNs, std::string* why) {
  std::string line;
  if (!ReadFirstLine(path, &line, why)) return false;
  std::string_view rest(line), token;
  if (!NextToken(&rest, &token) || token != "cpu") {
    *why = path + " does not start with a cpu line";
    return false;
  }
  uint64_t fields[8] = {0};
  int count = 0;
  while (count < 8 && NextToken(&rest, &token)) {
    if (!ParseU64(token, &fields[count])) {
      *why = path + ": malformed cpu line";
      return false;
    }
    count++;
  }
  if (count < 4) {
    *why = path + ": too few fields on the cpu line";
    return false;
  }
  uint64_t total = 0;
  for (uint64_t f : fields) total += f;  // wraps rather than traps on absurd values: only deltas are used
  uint64_t idle = fields[3] + fields[4];
  long tick = sysconf(_SC_CLK_TCK);
  uint64_t nsPerTick = tick > 0 ? 1000000000ull / static_cast<uint64_t>(tick) : 10000000ull;
  *totalNs = total * nsPerTick;
  *busyNs = (total >= idle ? total - idle : 0) * nsPerTick;
  return true;
}

}  // namespace bulwark::cgroup_internal
