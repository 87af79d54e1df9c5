#include "core/cpu/cpu_usage_counters.h"

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

}  // namespace bulwark::cgroup_internal
