// Unit and robustness checks for core/cpu/cgroup_cpu.cc and the files it is split into, outside Node, meant to run
// under the sanitizers (scripts/native-tests.sh builds it against every core source):
//
//   g++ -std=c++17 -fno-exceptions -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
//       -Inative native/core/{cgroup_cpu,cgroup_limits,cgroup_mounts,cpu_usage_counters,proc_file,proc_text}.cc
//       native/test/cgroup_cpu_test.cc -o /tmp/cgroup_cpu_test
//   /tmp/cgroup_cpu_test test/fixtures/cgroup [rounds per fixture, default 300]
//
// The fuzz part overwrites the files of each fixture tree (copied to a temp dir) with garbage, truncations, huge
// numbers, over-long lines and FIFOs, and checks the reader never crashes, never hangs and keeps its promises:
// cores > 0, samples within [0, 1000].
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/cpu/cgroup_cpu.h"
#include "test/check.h"

namespace fs = std::filesystem;
using bulwark::CgroupCpuReader;
using bulwark::ParseCpuList;

namespace {

void ExpectCpuList(const char* text, bool ok, int count) {
  int got = -1;
  bool parsed = ParseCpuList(text, &got);
  if (parsed != ok || (ok && got != count)) {
    std::fprintf(stderr, "ParseCpuList(\"%s\"): got %s/%d, want %s/%d\n", text, parsed ? "ok" : "error", got,
                 ok ? "ok" : "error", count);
    bulwark_test::g_failures++;
  }
}

void TestParseCpuList() {
  ExpectCpuList("0-2,4", true, 4);
  ExpectCpuList("0-2,4\n", true, 4);
  ExpectCpuList("  7 \n", true, 1);
  ExpectCpuList("", true, 0);
  ExpectCpuList("\n", true, 0);
  ExpectCpuList("0-3,2-5", true, 6);  // overlapping ranges count each CPU once
  ExpectCpuList("8,0-1", true, 3);    // out of order
  ExpectCpuList("3-1", false, 0);
  ExpectCpuList("1-", false, 0);
  ExpectCpuList("-1", false, 0);
  ExpectCpuList("a-b", false, 0);
  ExpectCpuList("0,,1", false, 0);
  ExpectCpuList("0,", false, 0);
  ExpectCpuList("1 -2", false, 0);
  ExpectCpuList("0-1-2", false, 0);
  ExpectCpuList("0x1", false, 0);
  ExpectCpuList("+1", false, 0);
  ExpectCpuList("99999999999999999999999", false, 0);
  ExpectCpuList("0-18446744073709551615", false, 0);
}

void WriteFile(const fs::path& p, const std::string& content) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
}

fs::path CopyToTemp(const fs::path& fixture) {
  char tmpl[] = "/tmp/bulwark-cgroup-fuzz-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  if (dir == nullptr) {
    std::perror("mkdtemp");
    std::exit(2);
  }
  std::error_code ec;
  fs::copy(fixture, dir, fs::copy_options::recursive, ec);
  if (ec) {
    std::fprintf(stderr, "copy %s: %s\n", fixture.c_str(), ec.message().c_str());
    std::exit(2);
  }
  return dir;
}

std::vector<fs::path> FilesUnder(const fs::path& root) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) files.push_back(it->path());
  return files;
}

// Content a cgroup file could plausibly be corrupted into.
std::string Garbage(std::mt19937* rng) {
  static const char* kPieces[] = {"max",
                                  "-1",
                                  "0",
                                  "-",
                                  ",",
                                  " ",
                                  "\n",
                                  "\t",
                                  "usage_usec",
                                  "cpu",
                                  "0-3",
                                  "3-1",
                                  ":",
                                  "/",
                                  "..",
                                  "\\",
                                  "\\040",
                                  "18446744073709551615",
                                  "99999999999999999999999",
                                  "-9223372036854775808",
                                  "cgroup2",
                                  "cgroup",
                                  "cpu,cpuacct",
                                  "0::/",
                                  "1-",
                                  "\xff"};
  std::uniform_int_distribution<int> kind(0, 9);
  std::string out;
  switch (kind(*rng)) {
    case 0: return "";
    case 1: return std::string(20000, 'x');              // larger than any buffer
    case 2: return std::string(9000, '1') + "\n0::/\n";  // an over-long first line
    case 3: {                                            // random bytes
      std::uniform_int_distribution<int> byte(0, 255), len(0, 300);
      for (int i = len(*rng); i > 0; i--) out.push_back(static_cast<char>(byte(*rng)));
      return out;
    }
    default: {  // plausible tokens, shuffled
      std::uniform_int_distribution<size_t> piece(0, sizeof kPieces / sizeof kPieces[0] - 1);
      std::uniform_int_distribution<int> len(1, 12);
      for (int i = len(*rng); i > 0; i--) out += kPieces[piece(*rng)];
      return out;
    }
  }
}

void CheckReader(const fs::path& root, uint64_t* wall) {
  CgroupCpuReader reader(root.string(), 4);
  const auto& info = reader.info();
  CHECK(info.cores > 0 && std::isfinite(info.cores));
  CHECK(info.quotaCores >= 0 && std::isfinite(info.quotaCores));
  CHECK(info.cpusetCpus >= 0);
  for (int i = 0; i < 3; i++) {
    double permille = -1;
    *wall += 500000000;
    if (reader.Sample(*wall, &permille)) CHECK(permille >= 0 && permille <= 1000);
  }
  CHECK(reader.info().cores > 0);
}

void FuzzFixture(const fs::path& fixture, std::mt19937* rng, int rounds) {
  fs::path root = CopyToTemp(fixture);
  std::vector<fs::path> files = FilesUnder(root);
  uint64_t wall = 1;
  for (int round = 0; round < rounds && !files.empty(); round++) {
    std::uniform_int_distribution<size_t> pick(0, files.size() - 1);
    const fs::path& victim = files[pick(*rng)];
    std::error_code ec;
    fs::remove(victim, ec);
    if (round % 17 == 0) {
      // A FIFO with no writer where a file should be: must neither block nor crash.
      CHECK(mkfifo(victim.c_str(), 0600) == 0);
    } else if (round % 13 != 0) {
      WriteFile(victim, Garbage(rng));
    }  // else: leave it deleted
    CheckReader(root, &wall);
    if (fs::is_fifo(victim, ec)) fs::remove(victim, ec);
  }
  fs::remove_all(root);
}

}  // namespace

int main(int argc, char** argv) {
  TestParseCpuList();
  if (argc > 1) {
    std::mt19937 rng(12345);
    std::error_code ec;
    for (auto& entry : fs::directory_iterator(argv[1], ec))
      if (entry.is_directory()) FuzzFixture(entry.path(), &rng, argc > 2 ? std::atoi(argv[2]) : 300);
  }
  if (bulwark_test::g_failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", bulwark_test::g_failures);
    return 1;
  }
  std::printf("cgroup_cpu_test: ok\n");
  return 0;
}
