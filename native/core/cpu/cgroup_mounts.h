// Where the cgroup hierarchies are mounted (/proc/self/mountinfo) and where this process sits in them
// (/proc/self/cgroup), resolved to directories below the reader's root.
//
// Cgroup paths are absolute ("/a/b"); "/" is the hierarchy's root.
#pragma once
#include <string>

#include "core/cpu/proc_file.h"

namespace bulwark::cgroup_internal {

struct Mount {
  bool found = false;
  std::string dir;         // mount point, as seen from `/` (without the reader's root)
  std::string root = "/";  // the hierarchy's directory shown at the mount point
};

struct Mounts {
  Mount v2, cpu, cpuacct, cpuset, memory;
};

struct ProcCgroups {
  bool found = false;
  std::string v2, cpu, cpuacct, cpuset, memory;  // "" when /proc/self/cgroup has no line for that hierarchy
};

// The first mount of each hierarchy in <root>/proc/self/mountinfo; without mountinfo, the usual places.
Mounts FindMounts(const std::string& root);

// This process's line for each hierarchy in <root>/proc/self/cgroup; `found` is false when the file is missing.
ProcCgroups ReadProcCgroups(const std::string& root);

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
                      Hierarchy* out, std::string* notes);

// "/a/b" -> "/a", "/a" -> "/".
std::string ParentPath(const std::string& path);

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

}  // namespace bulwark::cgroup_internal
