#include "core/cpu/cgroup_limits.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

#include "core/cpu/host_cpu.h"
#include "core/cpu/proc_file.h"
#include "core/cpu/proc_text.h"

namespace bulwark {

namespace cgroup_internal {

double ReadV2QuotaAt(const std::string& dir, std::string* notes) {
  std::string path = JoinPath(dir, "cpu.max"), text, why;
  if (!ReadSmallFile(path, &text, &why)) return 0;  // the root cgroup has no cpu.max: no limit there
  std::string_view rest(text), quotaText, periodText, extra;
  if (NextToken(&rest, &quotaText) && quotaText == "max") return 0;
  uint64_t quota = 0, period = 0;
  bool wellFormed = !quotaText.empty() && ParseU64(quotaText, &quota) && NextToken(&rest, &periodText) &&
                    ParseU64(periodText, &period) && !NextToken(&rest, &extra);
  if (!wellFormed || quota == 0) {
    AddNote(notes, path + " is malformed: quota ignored");
    return 0;
  }
  if (period == 0) {
    AddNote(notes, path + " has a period of 0: quota ignored");
    return 0;
  }
  return static_cast<double>(quota) / static_cast<double>(period);
}

double ReadV1QuotaAt(const std::string& dir, std::string* notes) {
  std::string quotaPath = JoinPath(dir, "cpu.cfs_quota_us"), text, why;
  if (!ReadSmallFile(quotaPath, &text, &why)) return 0;  // a kernel without CFS bandwidth control
  int64_t quota = 0;
  if (!ParseI64(text, &quota) || quota == 0) {
    AddNote(notes, quotaPath + " is malformed: quota ignored");
    return 0;
  }
  if (quota < 0) return 0;
  std::string periodPath = JoinPath(dir, "cpu.cfs_period_us");
  uint64_t period = 0;
  if (!ReadSmallFile(periodPath, &text, &why) || !ParseU64(text, &period)) {
    AddNote(notes, periodPath + " is missing or malformed: quota ignored");
    return 0;
  }
  if (period == 0) {
    AddNote(notes, periodPath + " is 0: quota ignored");
    return 0;
  }
  return static_cast<double>(quota) / static_cast<double>(period);
}

double SmallestQuota(const Hierarchy& h, double (*readAt)(const std::string&, std::string*), std::string* notes) {
  double smallest = 0;
  WalkUp(h, [&](const std::string& dir) {
    double q = readAt(dir, notes);
    if (q > 0 && (smallest == 0 || q < smallest)) smallest = q;
    return false;
  });
  return smallest;
}

int NearestCpusetCount(const Hierarchy& h, const char* fileName, std::string* notes) {
  int result = 0;
  WalkUp(h, [&](const std::string& dir) {
    std::string path = JoinPath(dir, fileName), text, why;
    if (!ReadSmallFile(path, &text, &why)) return false;
    int count = 0;
    if (!ParseCpuList(text, &count)) {
      AddNote(notes, path + " is malformed: cpuset ignored");
      return true;
    }
    result = count;
    return count > 0;
  });
  return result;
}

int ReadAffinityCpus(int override) { return override >= 0 ? override : ProcessAffinityCpus(); }

double EffectiveCores(const CpuSourceInfo& info) {
  double cores = 0;
  for (double limit : {info.quotaCores, static_cast<double>(info.cpusetCpus), static_cast<double>(info.affinityCpus)})
    if (limit > 0 && (cores == 0 || limit < cores)) cores = limit;
  return cores > 0 ? cores : OnlineCpus();
}

}  // namespace cgroup_internal

bool ParseCpuList(const std::string& text, int* count) {
  using cgroup_internal::IsSpace;
  using cgroup_internal::ParseU64;
  // Real CPU numbers stay far below this; anything larger is garbage, not a machine.
  const uint64_t kMaxCpu = 1 << 20;
  std::string_view rest = cgroup_internal::Trim(text);
  *count = 0;
  if (rest.empty()) return true;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    size_t dash = item.find('-');
    uint64_t first = 0, last = 0;
    if (!ParseU64(item.substr(0, dash), &first)) return false;
    last = first;
    if (dash != std::string_view::npos && !ParseU64(item.substr(dash + 1), &last)) return false;
    // ParseU64 trims, so reject inner whitespace ("1 -2") explicitly.
    for (char c : item)
      if (IsSpace(c)) return false;
    if (last < first || last >= kMaxCpu) return false;
    ranges.emplace_back(first, last);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  // Count distinct CPUs even if ranges overlap or come out of order.
  std::sort(ranges.begin(), ranges.end());
  uint64_t total = 0, next = 0;  // next: the first CPU not yet counted
  for (auto& r : ranges) {
    uint64_t from = std::max(r.first, next);
    if (r.second >= from) total += r.second - from + 1;
    next = std::max(next, r.second + 1);
  }
  *count = static_cast<int>(total);
  return true;
}

}  // namespace bulwark
