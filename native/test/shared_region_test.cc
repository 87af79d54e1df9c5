// Checks for core/region/shared_region.cc outside Node, meant to run under the sanitizers (scripts/native-tests.sh
// builds and runs it with every core source):
//
//   attach / detach and removal of the name; many attach-detach rounds (no leaked descriptor or mapping);
//   refusal of a bad spec; a region file whose bytes are overwritten at random or truncated, attached to (an error
//   status or a region, never a crash); a header overwritten while attached (the member capacity made huge), then
//   reaped and listed (nothing read past the mapping); members of another pid namespace judged by their lease.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/platform/clock.h"
#include "core/region/region_layout.h"
#include "core/region/shared_region.h"
#include "test/check.h"

using namespace bulwark;

namespace {

std::string UniqueName(const char* what) {
  static int n = 0;
  return std::string("native-test-") + what + "-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

RegionSpec Spec(const std::string& name, uint32_t capacity = 4) {
  RegionSpec spec;
  spec.name = name;
  spec.kind = "test";
  spec.fingerprint = "x=1";
  spec.memberCapacity = capacity;
  spec.payloadSize = 256;
  spec.reclaim.push_back(ReclaimEntry{0, 64});
  spec.init.push_back(InitEntry{8, 42.0});
  return spec;
}

// Where the region Spec(name) lives ("test.<name>").
std::string PathOf(const std::string& name) {
  std::string path;
  CHECK(RegionRegistry::Instance().Location("test." + name, &path).ok());
  return path;
}

bool Exists(const std::string& name) {
  struct stat st;
  return stat(PathOf(name).c_str(), &st) == 0;
}

void TestAttachDetach() {
  RegionRegistry& r = RegionRegistry::Instance();
  std::string name = UniqueName("life");
  RegionAttachment a, b;
  CHECK(r.Open(Spec(name), &a).ok());
  CHECK(r.Open(Spec(name), &b).ok());
  CHECK(a.created && !b.created && a.member != b.member);
  double init;
  std::memcpy(&init, b.base + b.payloadOffset + 8, sizeof init);
  CHECK(init == 42.0);
  std::vector<RegionMemberInfo> members;
  CHECK(r.Members(a.handle, &members).ok() && members.size() == 2);
  CHECK(r.Close(a.handle).ok());
  CHECK(Exists(name));
  CHECK(r.Close(b.handle).ok());
  CHECK(!Exists(name));
  CHECK(r.Close(b.handle).ok());  // closing twice is harmless
}

void TestManyRounds() {
  RegionRegistry& r = RegionRegistry::Instance();
  std::string name = UniqueName("rounds");
  for (int round = 0; round < 2000; round++) {
    RegionAttachment a;
    if (!r.Open(Spec(name), &a).ok()) {
      CHECK(false);
      return;
    }
    r.Close(a.handle);
  }
  CHECK(!Exists(name));
}

void TestBadSpecs() {
  RegionRegistry& r = RegionRegistry::Instance();
  RegionAttachment a;
  RegionSpec s = Spec("bad name");
  CHECK(r.Open(s, &a).code() == StatusCode::kInvalidArgument);
  s = Spec(UniqueName("cap"), 0);
  CHECK(r.Open(s, &a).code() == StatusCode::kInvalidArgument);
  s = Spec(UniqueName("reclaim"));
  s.reclaim[0].offset = 1u << 30;
  CHECK(r.Open(s, &a).code() == StatusCode::kInvalidArgument);
  s = Spec(UniqueName("kind"));
  s.kind = std::string(40, 'k');
  CHECK(r.Open(s, &a).code() == StatusCode::kInvalidArgument);
}

void TestCorruptFiles(int rounds) {
  RegionRegistry& r = RegionRegistry::Instance();
  std::mt19937 rng(12345);
  int opened = 0, refused = 0;
  for (int round = 0; round < rounds; round++) {
    std::string name = UniqueName("corrupt");
    RegionAttachment a;
    if (!r.Open(Spec(name), &a).ok()) {
      CHECK(false);
      continue;
    }
    std::string path = PathOf(name);
    size_t size = a.size;
    std::vector<uint8_t> bytes(a.base, a.base + size);
    r.Close(a.handle);
    // A dead writer's leftovers: random bytes at random places, maybe a truncation.
    int writes = static_cast<int>(rng() % 16);
    for (int i = 0; i < writes; i++) bytes[rng() % (layout::kHeaderSize + 256)] = static_cast<uint8_t>(rng());
    if (rng() % 3 == 0) bytes.resize(rng() % size);
    int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    CHECK(fd >= 0);
    if (fd < 0) continue;
    CHECK(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    close(fd);
    RegionAttachment b;
    Status st = r.Open(Spec(name), &b);
    if (st.ok()) {
      opened++;
      r.Close(b.handle);
    } else {
      refused++;
      CHECK(st.code() == StatusCode::kCorrupt || st.code() == StatusCode::kMismatch);
    }
    // Random bytes in the member table can look like a live member (pid 1, say) that keeps the name: remove it.
    unlink(path.c_str());
  }
  CHECK(opened > 0 && refused > 0);
  std::printf("corrupt files: %d attached (rebuilt), %d refused\n", opened, refused);
}

void TestHeaderOverwrittenWhileAttached() {
  RegionRegistry& r = RegionRegistry::Instance();
  std::string name = UniqueName("live");
  RegionAttachment a;
  CHECK(r.Open(Spec(name, 1), &a).ok());
  // A faulty writer makes the member capacity huge and the reclaim table nonsense: the reaper must stay inside the
  // mapping (it re-reads both from shared memory on every tick).
  uint32_t capacity = 4096;
  std::memcpy(a.base + layout::kMemberCapacityOffset, &capacity, sizeof capacity);
  int32_t count = 16;
  std::memcpy(a.base + layout::kReclaimCountOffset, &count, sizeof count);
  std::memset(a.base + layout::kReclaimOffset, 0xff, 16 * 8);
  for (int i = 0; i < 10; i++) r.MaintainAll();
  std::vector<RegionMemberInfo> members;
  CHECK(r.Members(a.handle, &members).ok());
  CHECK(r.Close(a.handle).ok());
  unlink(PathOf(name).c_str());
}

// Writes a member into `slot` as a process of another pid namespace would (its pid means nothing here), with its
// lease last renewed at `leaseMs`, holding 5 in the reclaimable cell.
void PlantForeignMember(const RegionAttachment& a, uint32_t slot, double leaseMs) {
  uint8_t* s = a.base + layout::MemberSlot(slot);
  int32_t pid = 1;  // pid 1 is alive here (init): only the lease can tell
  uint64_t ns = 12345, start = 1;
  std::memcpy(s + layout::kMemberStartTimeOffset, &start, sizeof start);
  std::memcpy(s + layout::kMemberPidNsOffset, &ns, sizeof ns);
  std::memcpy(s + layout::kMemberLeaseOffset, &leaseMs, sizeof leaseMs);
  std::memcpy(s + layout::kMemberPidOffset, &pid, sizeof pid);
  double held = 5;
  std::memcpy(a.base + a.payloadOffset + 64 * slot, &held, sizeof held);
}

double Held(const RegionAttachment& a, uint32_t slot) {
  double v;
  std::memcpy(&v, a.base + a.payloadOffset + 64 * slot, sizeof v);
  return v;
}

void TestLeases() {
  RegionRegistry& r = RegionRegistry::Instance();
  std::string name = UniqueName("lease");
  RegionAttachment a;
  CHECK(r.Open(Spec(name), &a).ok());
  double now = MonotonicMs();
  PlantForeignMember(a, 1, now);                             // renewing: alive
  PlantForeignMember(a, 2, now - layout::kLeaseTtlMs - 1);   // silent for longer than the lease: dead
  PlantForeignMember(a, 3, now + 10 * layout::kLeaseTtlMs);  // a lease in the future is no lease: dead
  r.MaintainAll();
  CHECK(Held(a, 1) == 5 && Held(a, 2) == 0 && Held(a, 3) == 0);
  std::vector<RegionMemberInfo> members;
  CHECK(r.Members(a.handle, &members).ok() && members.size() == 2);  // this process and the renewing one
  // This process's own lease is renewed by MaintainAll: it outlives many lease periods of silence from others.
  double own;
  std::memcpy(&own, a.base + layout::MemberSlot(a.member) + layout::kMemberLeaseOffset, sizeof own);
  CHECK(own >= now);
  int32_t zero = 0;
  std::memcpy(a.base + layout::MemberSlot(1) + layout::kMemberPidOffset, &zero, sizeof zero);
  CHECK(r.Close(a.handle).ok());
  CHECK(!Exists(name));
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  TestAttachDetach();
  TestManyRounds();
  TestBadSpecs();
  TestCorruptFiles(rounds);
  TestHeaderOverwrittenWhileAttached();
  TestLeases();
  RegionRegistry::Instance().CloseAll();
  if (bulwark_test::g_failures != 0) {
    std::fprintf(stderr, "shared_region_test: %d check(s) failed\n", bulwark_test::g_failures);
    return 1;
  }
  std::printf("shared_region_test: ok\n");
  return 0;
}
