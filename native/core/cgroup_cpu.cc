#include "core/cgroup_cpu.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

namespace bulwark {

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Reading files. Every read goes through a fixed-size buffer: a huge or endless file (a FIFO, a device) can neither
// exhaust memory nor block start-up.

constexpr size_t kSmallFileBytes = 4096;  // cpu.max, cpu.stat, cpuacct.usage, cpuset lists, /proc/stat's first line
constexpr size_t kLineBytes = 8192;       // one line of mountinfo or /proc/self/cgroup (paths up to PATH_MAX)

class File {
 public:
  explicit File(const std::string& path) {
    // O_NONBLOCK: opening or reading a FIFO planted where a cgroup file should be must not hang the reader.
    do {
      fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) error_ = errno;
  }
  ~File() {
    if (fd_ >= 0) close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  bool ok() const { return fd_ >= 0; }
  int error() const { return error_; }

  // Reads up to `cap` bytes, across short reads, until end of file or the buffer is full. -1 on a read error.
  ssize_t ReadUpTo(char* buf, size_t cap) {
    size_t len = 0;
    while (len < cap) {
      ssize_t n = read(fd_, buf + len, cap - len);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = errno;
        return -1;
      }
      if (n == 0) break;
      len += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(len);
  }

 private:
  int fd_ = -1;
  int error_ = 0;
};

std::string ErrnoText(int error) { return error != 0 ? std::strerror(error) : "read failed"; }

// The whole content of a small file, or false (and why) when it is missing, unreadable or larger than expected.
bool ReadSmallFile(const std::string& path, std::string* out, std::string* why) {
  File file(path);
  if (!file.ok()) {
    *why = "cannot open " + path + ": " + ErrnoText(file.error());
    return false;
  }
  char buf[kSmallFileBytes + 1];
  ssize_t n = file.ReadUpTo(buf, sizeof buf);
  if (n < 0) {
    *why = "cannot read " + path + ": " + ErrnoText(file.error());
    return false;
  }
  if (static_cast<size_t>(n) > kSmallFileBytes) {
    *why = path + " is larger than " + std::to_string(kSmallFileBytes) + " bytes";
    return false;
  }
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

// The first line of a file whose later lines may be long (/proc/stat's "intr" line runs to kilobytes).
bool ReadFirstLine(const std::string& path, std::string* out, std::string* why) {
  File file(path);
  if (!file.ok()) {
    *why = "cannot open " + path + ": " + ErrnoText(file.error());
    return false;
  }
  char buf[kSmallFileBytes];
  ssize_t n = file.ReadUpTo(buf, sizeof buf);
  if (n < 0) {
    *why = "cannot read " + path + ": " + ErrnoText(file.error());
    return false;
  }
  const char* end = static_cast<const char*>(std::memchr(buf, '\n', static_cast<size_t>(n)));
  if (end == nullptr && static_cast<size_t>(n) == sizeof buf) {
    *why = "the first line of " + path + " is too long";
    return false;
  }
  out->assign(buf, end != nullptr ? static_cast<size_t>(end - buf) : static_cast<size_t>(n));
  return true;
}

// Calls onLine(std::string_view) for each line of a file of any length. Lines longer than kLineBytes are skipped:
// no line we look for is that long. Returns false when the file cannot be opened.
template <typename OnLine>
bool ForEachLine(const std::string& path, OnLine onLine) {
  File file(path);
  if (!file.ok()) return false;
  std::vector<char> buf(kLineBytes);
  size_t len = 0;
  bool skipping = false;  // inside an over-long line: drop bytes until its newline
  for (;;) {
    ssize_t n = file.ReadUpTo(buf.data() + len, buf.size() - len);
    if (n <= 0) break;
    len += static_cast<size_t>(n);
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
      if (buf[i] != '\n') continue;
      if (!skipping) onLine(std::string_view(buf.data() + start, i - start));
      skipping = false;
      start = i + 1;
    }
    if (start == 0 && len == buf.size()) {  // a full buffer without a newline
      skipping = true;
      len = 0;
      continue;
    }
    std::memmove(buf.data(), buf.data() + start, len - start);
    len -= start;
  }
  if (len > 0 && !skipping) onLine(std::string_view(buf.data(), len));  // last line without a newline
  return true;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing.

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Splits off the next whitespace-separated token; false when none is left.
bool NextToken(std::string_view* rest, std::string_view* token) {
  std::string_view s = *rest;
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  size_t end = 0;
  while (end < s.size() && !IsSpace(s[end])) end++;
  *token = s.substr(0, end);
  *rest = s.substr(end);
  return end > 0;
}

// A decimal unsigned integer and nothing else (surrounding whitespace allowed). strtoull alone would accept "-1",
// "+5", " 7x" and hex prefixes' leading zeros silently, so the digits are checked first.
bool ParseU64(std::string_view text, uint64_t* out) {
  text = Trim(text);
  if (text.empty() || text.size() > 20) return false;
  for (char c : text)
    if (!IsDigit(c)) return false;
  char buf[24];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(buf, &end, 10);
  if (errno != 0 || end != buf + text.size()) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

// A decimal signed integer: an optional '-' and digits, within int64_t.
bool ParseI64(std::string_view text, int64_t* out) {
  text = Trim(text);
  bool negative = !text.empty() && text.front() == '-';
  if (negative && (text.size() < 2 || !IsDigit(text[1]))) return false;  // "-", "- 5"
  uint64_t magnitude = 0;
  if (!ParseU64(negative ? text.substr(1) : text, &magnitude)) return false;
  const uint64_t kMaxPositive = static_cast<uint64_t>(INT64_MAX);
  if (magnitude > kMaxPositive + (negative ? 1 : 0)) return false;
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

// Walks the lines of an in-memory text.
template <typename OnLine>
void ForEachLineOf(std::string_view text, OnLine onLine) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    onLine(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

bool HasToken(std::string_view text, std::string_view wanted, char separator) {
  while (!text.empty()) {
    size_t cut = text.find(separator);
    if (Trim(text.substr(0, cut)) == wanted) return true;
    if (cut == std::string_view::npos) break;
    text.remove_prefix(cut + 1);
  }
  return false;
}

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
std::string UnescapeMountPath(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    bool octal = s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
                 s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7';
    if (octal) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Paths. Cgroup paths are absolute ("/a/b"); "/" is the hierarchy's root.

// root + "/x/y", without doubled slashes ("/" + "/x" -> "/x").
std::string JoinPath(const std::string& base, std::string_view rel) {
  std::string out = base;
  while (!out.empty() && out.back() == '/') out.pop_back();
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  if (!rel.empty()) {
    out.push_back('/');
    out.append(rel.data(), rel.size());
  }
  return out.empty() ? "/" : out;
}

// "/a/b" -> "/a", "/a" -> "/".
std::string ParentPath(const std::string& path) {
  size_t cut = path.find_last_of('/');
  return cut == 0 || cut == std::string::npos ? "/" : path.substr(0, cut);
}

bool HasDotDot(std::string_view path) {
  while (!path.empty()) {
    size_t cut = path.find('/');
    if (path.substr(0, cut) == "..") return true;
    if (cut == std::string_view::npos) break;
    path.remove_prefix(cut + 1);
  }
  return false;
}

// The process path relative to a mount whose root is `mountRoot` (not "/" inside a cgroup namespace or a
// container that bind-mounts its own cgroup). A path outside the mount's root is returned unchanged.
std::string StripMountRoot(const std::string& path, const std::string& mountRoot) {
  if (mountRoot.empty() || mountRoot == "/") return path;
  if (path == mountRoot) return "/";
  bool under = path.size() > mountRoot.size() && path.compare(0, mountRoot.size(), mountRoot) == 0 &&
               path[mountRoot.size()] == '/';
  return under ? path.substr(mountRoot.size()) : path;
}

void AddNote(std::string* notes, const std::string& note) {
  if (note.empty()) return;
  if (!notes->empty()) notes->append("; ");
  notes->append(note);
}

// ---------------------------------------------------------------------------------------------------------------
// Where the hierarchies are mounted and where this process sits in them.

struct Mount {
  bool found = false;
  std::string dir;         // mount point, as seen from `/` (without the reader's root)
  std::string root = "/";  // the hierarchy's directory shown at the mount point
};

struct Mounts {
  Mount v2, cpu, cpuacct, cpuset;
};

struct ProcCgroups {
  bool found = false;
  std::string v2, cpu, cpuacct, cpuset;  // "" when /proc/self/cgroup has no line for that hierarchy
};

void RecordMount(Mount* mount, const std::string& dir, const std::string& root) {
  if (mount->found) return;  // the first mount of a hierarchy wins
  mount->found = true;
  mount->dir = dir;
  mount->root = root;
}

// One mountinfo line: "id parent major:minor root mountpoint options [optional...] - fstype source superoptions".
void ParseMountinfoLine(std::string_view line, Mounts* mounts) {
  std::string_view fields[5], token;
  for (auto& field : fields)
    if (!NextToken(&line, &field)) return;
  while (NextToken(&line, &token) && token != "-") {
  }
  std::string_view fstype, source, superOptions;
  if (!NextToken(&line, &fstype) || !NextToken(&line, &source)) return;
  NextToken(&line, &superOptions);
  std::string root = UnescapeMountPath(fields[3]);
  std::string dir = UnescapeMountPath(fields[4]);
  if (fstype == "cgroup2") {
    RecordMount(&mounts->v2, dir, root);
  } else if (fstype == "cgroup") {
    if (HasToken(superOptions, "cpu", ',')) RecordMount(&mounts->cpu, dir, root);
    if (HasToken(superOptions, "cpuacct", ',')) RecordMount(&mounts->cpuacct, dir, root);
    if (HasToken(superOptions, "cpuset", ',')) RecordMount(&mounts->cpuset, dir, root);
  }
}

// Without mountinfo: the usual places, the first that exists.
void FindDefaultMount(const std::string& root, std::initializer_list<const char*> candidates, const char* marker,
                      Mount* mount) {
  for (const char* dir : candidates) {
    std::string full = JoinPath(root, dir);
    bool present = marker != nullptr ? IsFile(JoinPath(full, marker)) : IsDirectory(full);
    if (present) {
      RecordMount(mount, dir, "/");
      return;
    }
  }
}

Mounts FindMounts(const std::string& root) {
  Mounts mounts;
  auto onLine = [&](std::string_view line) { ParseMountinfoLine(line, &mounts); };
  bool haveMountinfo = ForEachLine(JoinPath(root, "/proc/self/mountinfo"), onLine);
  if (haveMountinfo) return mounts;
  // A v2 mount is recognised by its cgroup.controllers (a hybrid host mounts it at .../unified).
  FindDefaultMount(root, {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}, "cgroup.controllers", &mounts.v2);
  FindDefaultMount(root, {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"}, nullptr, &mounts.cpu);
  FindDefaultMount(root, {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpuacct"}, nullptr, &mounts.cpuacct);
  FindDefaultMount(root, {"/sys/fs/cgroup/cpuset"}, nullptr, &mounts.cpuset);
  return mounts;
}

// One /proc/self/cgroup line: "hierarchy-id:controller,list:/path" ("0::/path" for v2). The path may contain ':'.
void ParseProcCgroupLine(std::string_view line, ProcCgroups* cgroups) {
  size_t first = line.find(':');
  if (first == std::string_view::npos) return;
  size_t second = line.find(':', first + 1);
  if (second == std::string_view::npos) return;
  std::string_view id = line.substr(0, first);
  std::string_view controllers = line.substr(first + 1, second - first - 1);
  std::string_view path = line.substr(second + 1);
  while (!path.empty() && (path.back() == '\r' || path.back() == ' ')) path.remove_suffix(1);
  if (path.empty() || path.front() != '/') return;
  std::string p(path);
  if (id == "0" && controllers.empty() && cgroups->v2.empty()) cgroups->v2 = p;
  if (HasToken(controllers, "cpu", ',') && cgroups->cpu.empty()) cgroups->cpu = p;
  if (HasToken(controllers, "cpuacct", ',') && cgroups->cpuacct.empty()) cgroups->cpuacct = p;
  if (HasToken(controllers, "cpuset", ',') && cgroups->cpuset.empty()) cgroups->cpuset = p;
}

ProcCgroups ReadProcCgroups(const std::string& root) {
  ProcCgroups cgroups;
  auto onLine = [&](std::string_view line) { ParseProcCgroupLine(line, &cgroups); };
  cgroups.found = ForEachLine(JoinPath(root, "/proc/self/cgroup"), onLine);
  return cgroups;
}

// This process's directory in one hierarchy: the mount (under the reader's root) and the path below it.
struct Hierarchy {
  std::string mountDir;  // full path of the mount point
  std::string rel;       // "/" at the mount root
  std::string Dir() const { return JoinPath(mountDir, rel); }
  std::string File(const char* name) const { return JoinPath(Dir(), name); }
};

// Resolves the process's cgroup directory; when it is not there (a container that sees only its own cgroup at the
// mount root, or a path outside the mount) the mount root stands in, and the note says so.
bool ResolveHierarchy(const std::string& root, const Mount& mount, const std::string& procPath, const char* label,
                      Hierarchy* out, std::string* notes) {
  if (!mount.found) return false;
  out->mountDir = JoinPath(root, mount.dir);
  if (procPath.empty()) {
    AddNote(notes, std::string("/proc/self/cgroup lists no ") + label + " cgroup: using the mount root");
    out->rel = "/";
    return true;
  }
  out->rel = StripMountRoot(procPath, mount.root);
  if (out->rel == "/") return true;
  if (HasDotDot(out->rel) || !IsDirectory(out->Dir())) {
    AddNote(notes, std::string(label) + " cgroup " + procPath + " not found under " + out->mountDir +
                       ": using the mount root");
    out->rel = "/";
  }
  return true;
}

// Calls visit(dir) from the process's cgroup up to the mount root, until visit returns true.
template <typename Visit>
void WalkUp(const Hierarchy& h, Visit visit) {
  std::string rel = h.rel;
  for (;;) {
    if (visit(JoinPath(h.mountDir, rel))) return;
    if (rel == "/") return;
    rel = ParentPath(rel);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Usage counters.

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

// /proc/stat's "cpu" line: user nice system idle iowait irq softirq steal [guest guest_nice]. guest time is already
// counted in user and nice, so it is left out of the total. Busy = total - idle - iowait.
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

// ---------------------------------------------------------------------------------------------------------------
// Limits. Each returns 0 for "no limit" (or unknown) and notes a malformed file it had to ignore.

// cpu.max: "<quota> <period>" or "max <period>" (older kernels: just "max").
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

// cpu.cfs_quota_us (-1: no limit) over cpu.cfs_period_us (0 is an error).
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

// A parent's limit binds its children too: the smallest limit from the process's cgroup up to the mount root.
double SmallestQuota(const Hierarchy& h, double (*readAt)(const std::string&, std::string*), std::string* notes) {
  double smallest = 0;
  WalkUp(h, [&](const std::string& dir) {
    double q = readAt(dir, notes);
    if (q > 0 && (smallest == 0 || q < smallest)) smallest = q;
    return false;
  });
  return smallest;
}

// CPUs in the nearest cpuset list from the process's cgroup up (a v2 cgroup without the cpuset controller has no
// file of its own). 0 when unknown; a malformed list is ignored with a note.
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

int ReadAffinityCpus(int override) {
  if (override >= 0) return override;
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  // More CPUs than a cpu_set_t holds: ask again with a larger mask.
  const int kMaxCpus = 1 << 16;
  cpu_set_t* big = CPU_ALLOC(kMaxCpus);
  if (big == nullptr) return 0;
  size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  CPU_ZERO_S(size, big);
  int count = sched_getaffinity(0, size, big) == 0 ? CPU_COUNT_S(size, big) : 0;
  CPU_FREE(big);
  return count;
#else
  return 0;
#endif
}

double OnlineCpus() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<double>(n) : 1;
}

// min(quota, cpuset, affinity) over the known ones, else the online CPUs.
double EffectiveCores(const CpuSourceInfo& info) {
  double cores = 0;
  for (double limit : {info.quotaCores, static_cast<double>(info.cpusetCpus), static_cast<double>(info.affinityCpus)})
    if (limit > 0 && (cores == 0 || limit < cores)) cores = limit;
  return cores > 0 ? cores : OnlineCpus();
}

// Turns `info` into the host-wide /proc/stat source; `why` says why no cgroup accounting is used.
void BecomeHost(const std::string& root, const std::string& why, CpuSourceInfo* info) {
  info->kind = CpuSourceKind::kHost;
  info->quotaCores = 0;
  info->cpusetCpus = 0;
  info->cgroupPath.clear();
  info->usagePath = JoinPath(root, "/proc/stat");
  AddNote(&info->note, why);
  uint64_t busy = 0, total = 0;
  std::string unreadable;
  if (!ReadHostTimesNs(info->usagePath, &busy, &total, &unreadable))
    AddNote(&info->note, unreadable + ": no CPU usage available");
  info->cores = EffectiveCores(*info);
}

// Adopts a cgroup source found readable. `notes` carries what was ignored or replaced on the way.
void Adopt(CpuSourceKind kind, const std::string& cgroupPath, const std::string& usagePath, const std::string& notes,
           CpuSourceInfo* info) {
  info->kind = kind;
  info->cgroupPath = cgroupPath;
  info->usagePath = usagePath;
  info->note = notes;
  info->cores = EffectiveCores(*info);
}

// cgroup v2, when its cpu.stat is readable. Without the cpu controller there is usage but no quota.
bool TryV2(const std::string& root, const std::string& procPath, const Mount& mount, bool withController,
           std::string* notes, CpuSourceInfo* info) {
  std::string local = *notes;
  Hierarchy h;
  if (!ResolveHierarchy(root, mount, procPath, "v2", &h, &local)) return false;
  std::string usagePath = h.File("cpu.stat"), why;
  uint64_t usage = 0;
  if (!ReadV2UsageNs(usagePath, &usage, &why)) {
    AddNote(notes, why);
    return false;
  }
  if (withController) {
    info->quotaCores = SmallestQuota(h, ReadV2QuotaAt, &local);
  } else {
    AddNote(&local, "cgroup v2 without the cpu controller: usage only, no quota");
  }
  info->cpusetCpus = NearestCpusetCount(h, "cpuset.cpus.effective", &local);
  Adopt(CpuSourceKind::kCgroupV2, procPath, usagePath, local, info);
  return true;
}

// cgroup v1, when cpuacct.usage is readable; the quota and the cpuset come from their own hierarchies.
bool TryV1(const std::string& root, const ProcCgroups& proc, const Mounts& mounts, std::string* notes,
           CpuSourceInfo* info) {
  std::string local = *notes;
  Hierarchy acct;
  if (!ResolveHierarchy(root, mounts.cpuacct, proc.cpuacct, "cpuacct", &acct, &local)) return false;
  std::string usagePath = acct.File("cpuacct.usage"), why;
  uint64_t usage = 0;
  if (!ReadV1UsageNs(usagePath, &usage, &why)) {
    AddNote(notes, why);
    return false;
  }
  Hierarchy cpu, cpuset;
  if (ResolveHierarchy(root, mounts.cpu, proc.cpu, "cpu", &cpu, &local))
    info->quotaCores = SmallestQuota(cpu, ReadV1QuotaAt, &local);
  if (ResolveHierarchy(root, mounts.cpuset, proc.cpuset, "cpuset", &cpuset, &local))
    info->cpusetCpus = NearestCpusetCount(cpuset, "cpuset.cpus", &local);
  Adopt(CpuSourceKind::kCgroupV1, proc.cpuacct, usagePath, local, info);
  return true;
}

double ClampPermille(double value) {
  if (!(value > 0)) return 0;  // also NaN
  return value > 1000 ? 1000 : value;
}

}  // namespace

// -----------------------------------------------------------------------------------------------------------------

const char* CpuSourceName(CpuSourceKind kind) {
  switch (kind) {
    case CpuSourceKind::kCgroupV1: return "cgroup-v1";
    case CpuSourceKind::kCgroupV2: return "cgroup-v2";
    default: return "host";
  }
}

bool ParseCpuList(const std::string& text, int* count) {
  // Real CPU numbers stay far below this; anything larger is garbage, not a machine.
  const uint64_t kMaxCpu = 1 << 20;
  std::string_view rest = Trim(text);
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

CgroupCpuReader::CgroupCpuReader(std::string root, int affinityCpus)
    : root_(root.empty() ? "/" : std::move(root)), affinityOverride_(affinityCpus) {
  Detect();
}

// Prefers the hierarchy that holds the CPU controller: v2 when its cgroup.controllers lists cpu, else v1's cpuacct,
// else v2's cpu.stat alone (usage without a quota), else the host's /proc/stat.
void CgroupCpuReader::Detect() {
  info_ = CpuSourceInfo();
  info_.affinityCpus = ReadAffinityCpus(affinityOverride_);
  std::string notes;
  ProcCgroups proc = ReadProcCgroups(root_);
  if (!proc.found) {
#ifdef __linux__
    BecomeHost(root_, "no /proc/self/cgroup: using host-wide /proc/stat", &info_);
#else
    BecomeHost(root_, "not Linux, no cgroups: using host-wide /proc/stat", &info_);
#endif
    return;
  }
  Mounts mounts = FindMounts(root_);
  std::string controllers, ignored;
  std::string controllersPath = JoinPath(JoinPath(root_, mounts.v2.dir), "cgroup.controllers");
  bool v2HasCpu = mounts.v2.found && ReadSmallFile(controllersPath, &controllers, &ignored) &&
                  HasToken(controllers, "cpu", ' ');
  if (v2HasCpu && TryV2(root_, proc.v2, mounts.v2, true, &notes, &info_)) return;
  if (TryV1(root_, proc, mounts, &notes, &info_)) return;
  if (!v2HasCpu && TryV2(root_, proc.v2, mounts.v2, false, &notes, &info_)) return;
  AddNote(&notes, "no readable cgroup CPU accounting: using host-wide /proc/stat");
  BecomeHost(root_, notes, &info_);
}

bool CgroupCpuReader::ReadUsageNs(uint64_t* usageNs, uint64_t* hostTotalNs) {
  *hostTotalNs = 0;
  switch (info_.kind) {
    case CpuSourceKind::kCgroupV1: return ReadV1UsageNs(info_.usagePath, usageNs, &readError_);
    case CpuSourceKind::kCgroupV2: return ReadV2UsageNs(info_.usagePath, usageNs, &readError_);
    default: return ReadHostTimesNs(info_.usagePath, usageNs, hostTotalNs, &readError_);
  }
}

void CgroupCpuReader::Prime(uint64_t wallNs, uint64_t usageNs, uint64_t hostTotalNs) {
  primed_ = true;
  lastWallNs_ = wallNs;
  lastUsageNs_ = usageNs;
  lastHostTotal_ = hostTotalNs;
}

bool CgroupCpuReader::Sample(uint64_t wallNs, double* permille) {
  uint64_t usage = 0, hostTotal = 0;
  if (!ReadUsageNs(&usage, &hostTotal)) {
    primed_ = false;
    if (info_.kind == CpuSourceKind::kHost) return false;
    BecomeHost(root_, info_.usagePath + " became unreadable (" + readError_ + "): switched to host-wide /proc/stat",
               &info_);
    if (ReadUsageNs(&usage, &hostTotal)) Prime(wallNs, usage, hostTotal);
    return false;
  }
  if (!primed_) {
    Prime(wallNs, usage, hostTotal);
    return false;
  }
  bool host = info_.kind == CpuSourceKind::kHost;
  if (usage < lastUsageNs_ || (host && hostTotal < lastHostTotal_)) {
    // A counter went backwards (the cgroup was recreated, or the host counters reset): no meaningful delta.
    Prime(wallNs, usage, hostTotal);
    *permille = 0;
    return true;
  }
  if (host) {
    if (hostTotal == lastHostTotal_) return false;  // not one tick yet: keep the baseline, measure a longer span
    *permille = ClampPermille(static_cast<double>(usage - lastUsageNs_) /
                              static_cast<double>(hostTotal - lastHostTotal_) * 1000);
  } else {
    if (wallNs < lastWallNs_) {  // the caller's clock went backwards: start over
      Prime(wallNs, usage, hostTotal);
      return false;
    }
    if (wallNs == lastWallNs_) return false;
    double cores = info_.cores > 0 ? info_.cores : 1;
    *permille = ClampPermille(static_cast<double>(usage - lastUsageNs_) / static_cast<double>(wallNs - lastWallNs_) /
                              cores * 1000);
  }
  Prime(wallNs, usage, hostTotal);
  return true;
}

}  // namespace bulwark
