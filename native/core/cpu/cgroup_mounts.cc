#include "core/cpu/cgroup_mounts.h"

#include <initializer_list>
#include <string_view>

#include "core/cpu/proc_text.h"

namespace bulwark::cgroup_internal {

namespace {

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
    if (HasToken(superOptions, "memory", ',')) RecordMount(&mounts->memory, dir, root);
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
  if (HasToken(controllers, "memory", ',') && cgroups->memory.empty()) cgroups->memory = p;
}

}  // namespace

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
  FindDefaultMount(root, {"/sys/fs/cgroup/memory"}, nullptr, &mounts.memory);
  return mounts;
}

ProcCgroups ReadProcCgroups(const std::string& root) {
  ProcCgroups cgroups;
  auto onLine = [&](std::string_view line) { ParseProcCgroupLine(line, &cgroups); };
  cgroups.found = ForEachLine(JoinPath(root, "/proc/self/cgroup"), onLine);
  return cgroups;
}

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

std::string ParentPath(const std::string& path) {
  size_t cut = path.find_last_of('/');
  return cut == 0 || cut == std::string::npos ? "/" : path.substr(0, cut);
}

}  // namespace bulwark::cgroup_internal
