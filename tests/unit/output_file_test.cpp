// Outputs that are not plain files, and the atomic replace of those that are
// (reports/base/output_file.hpp): devices, FIFOs and standard output written in place and left what
// they were; a regular file replaced whole, its mode kept; a new one made 0666 & ~umask; a
// planted link in a sticky folder refused; "-" in and out; the text report printed before a
// save that fails. Every test makes its own device nodes and FIFOs in a folder of its own and
// removes it: none names the machine's /dev/null, /dev/full or /dev/stdout as an output.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/line_reader.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/base/output_file.hpp"
#include "unit/run_binary.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab {
namespace {

using test::run_gpulab;

const std::string kFixtures = GPULAB_FIXTURES_DIR;
const std::string kTranspose = kFixtures + "/labs/transpose.json";
const std::string kStreams = kFixtures + "/labs/streams.json";  // has timelines: --trace

using Folder = test::TempFolder;

bool is_root() { return ::geteuid() == 0; }

#define SKIP_UNLESS_ROOT() \
  if (!is_root()) GTEST_SKIP() << "needs root: makes device nodes and owns files for others"

struct Node {
  mode_t type;
  dev_t rdev;
};

Node node_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return {static_cast<mode_t>(st.st_mode & S_IFMT), st.st_rdev};
}

// A character device of the machine's kind: 1,3 is a null device, 1,7 a full one.
std::string make_char_device(const Folder& folder, const std::string& name, unsigned minor) {
  const std::string path = folder / name;
  EXPECT_EQ(::mknod(path.c_str(), S_IFCHR | 0666, ::makedev(1, minor)), 0) << path;
  EXPECT_EQ(::chmod(path.c_str(), 0666), 0) << "writable by all, whatever the umask";
  return path;
}

void expect_char_device(const std::string& path, unsigned minor) {
  const Node n = node_of(path);
  EXPECT_EQ(n.type, static_cast<mode_t>(S_IFCHR)) << path << " is still a character device";
  EXPECT_EQ(major(n.rdev), 1u) << path;
  EXPECT_EQ(minor(n.rdev), minor) << path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::string write_error(const std::string& path, const std::string& content) {
  std::ostringstream out;
  try {
    write_output(path, content, out);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// What a FIFO's reader gets: opened at once (without waiting for a writer), then read until
// the writer closes it, or for at most `limit_ms` when no writer comes (gpulab replaced the FIFO
// instead of writing to it), so that a failing test ends instead of hanging.
std::string read_fifo(const std::string& fifo, int limit_ms = 10000) {
  const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) return "";
  std::string got;
  bool written = false;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    pollfd ready{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      got.append(buf, static_cast<std::size_t>(n));
      written = true;
    } else if (n == 0 && written) {
      break;  // the writer closed it
    } else if (n == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // no writer has come yet
    }
  }
  ::close(fd);
  return got;
}

// --- the function ---------------------------------------------------------------------------

TEST(OutputFile, ReplacesARegularFileWholeAndLeavesNoTemporaries) {
  Folder folder;
  const auto path = folder / "report.json";
  std::ostringstream out;
  write_output(path, "first", out);
  write_output(path, "second", out);
  EXPECT_EQ(read_file(path), "second");
  EXPECT_EQ(folder.names(), std::vector<std::string>{"report.json"});
  EXPECT_EQ(out.str(), "") << "nothing on standard output";
}

TEST(OutputFile, UnwritableTargetsAreRefusedNamingThePathGiven) {
  Folder folder;
  EXPECT_THROW(check_output("/nonexistent-folder/report.json"), UsageError);
  const auto missing = folder / "no/such/report.json";
  const auto why = write_error(missing, "{}");
  EXPECT_NE(why.find("'" + missing + "'"), std::string::npos) << why;
  EXPECT_NE(why.find("does not exist"), std::string::npos) << why;
  EXPECT_NE(write_error(folder.path, "{}").find("it is a directory"), std::string::npos);
  EXPECT_TRUE(folder.names().empty());
}

TEST(OutputFile, StandardOutputIsTheStream) {
  std::ostringstream out;
  write_output("-", "{\"a\": 1}\n", out);
  check_output("-");
  EXPECT_EQ(out.str(), "{\"a\": 1}\n");
}

TEST(OutputFile, ANewFileGetsTheUmasksMode) {
  Folder folder;
  const mode_t before = ::umask(027);
  std::ostringstream out;
  write_output(folder / "a.json", "{}", out);
  ::umask(022);
  write_output(folder / "b.json", "{}", out);
  ::umask(before);
  EXPECT_EQ(mode_of(folder / "a.json"), 0640u) << "0666 & ~027";
  EXPECT_EQ(mode_of(folder / "b.json"), 0644u) << "0666 & ~022";
}

TEST(OutputFile, ARewrittenFileKeepsItsMode) {
  Folder folder;
  const auto path = folder / "private.json";
  std::ostringstream out;
  write_output(path, "first", out);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  write_output(path, "second", out);
  EXPECT_EQ(mode_of(path), 0600u) << "a report holds the program's argv: never wider";
  ASSERT_EQ(::chmod(path.c_str(), 0664), 0);
  write_output(path, "third", out);
  EXPECT_EQ(mode_of(path), 0664u);
  EXPECT_EQ(read_file(path), "third");
}

TEST(OutputFile, ARewrittenFileKeepsItsOwner) {
  SKIP_UNLESS_ROOT();
  Folder folder;
  const auto path = folder / "theirs.json";
  std::ostringstream out;
  write_output(path, "first", out);
  ASSERT_EQ(::chown(path.c_str(), 4321, 4322), 0);
  write_output(path, "second", out);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4321u);
  EXPECT_EQ(st.st_gid, 4322u);
}

TEST(OutputFile, NullDeviceIsWrittenInPlace) {
  SKIP_UNLESS_ROOT();
  Folder folder;
  const auto null = make_char_device(folder, "null", 3);
  std::ostringstream out;
  check_output(null);
  write_output(null, std::string(100000, 'x'), out);
  expect_char_device(null, 3);
  EXPECT_EQ(folder.names(), std::vector<std::string>{"null"}) << "no temporary file";
}

TEST(OutputFile, FullDeviceSaysNoSpaceLeft) {
  SKIP_UNLESS_ROOT();
  Folder folder;
  const auto full = make_char_device(folder, "full", 7);
  const auto why = write_error(full, "{}");
  EXPECT_EQ(why, "cannot write '" + full + "': no space left on device");
  expect_char_device(full, 7);
}

TEST(OutputFile, FifoIsWrittenInPlaceAndItsReaderGetsTheContent) {
  Folder folder;
  const auto fifo = folder / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read_fifo(fifo); });
  std::ostringstream out;
  write_output(fifo, "through the pipe\n", out);
  reader.join();
  EXPECT_EQ(got, "through the pipe\n");
  EXPECT_EQ(node_of(fifo).type, static_cast<mode_t>(S_IFIFO)) << "still a FIFO";
}

TEST(OutputFile, DescriptorLinksAreWrittenInPlace) {
  // /proc/self/fd/N names what descriptor N has open: here a pipe of the test's own.
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  std::ostringstream out;
  write_output("/proc/self/fd/" + std::to_string(ends[1]), "to the pipe", out);
  ::close(ends[1]);
  EXPECT_EQ(test::drain(ends[0]), "to the pipe");
}

TEST(OutputFile, ALinkIntoAFileIsFollowedAndStays) {
  Folder folder;
  const auto link = folder / "link.json";
  ASSERT_EQ(::symlink("target.json", link.c_str()), 0);
  std::ostringstream out;
  write_output(link, "through", out);
  EXPECT_EQ(read_file(folder / "target.json"), "through");
  struct stat st {};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link is still a link";
}

TEST(OutputFile, APlantedLinkInAStickyFolderIsRefused) {
  SKIP_UNLESS_ROOT();
  Folder folder;
  // A /tmp of the test's own: sticky, world-writable, owned by the caller (root).
  const auto shared = folder / "shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  const auto victim = folder / "victim.json";
  std::ofstream(victim) << "keep me";
  // Another user's link: refused, as fs.protected_symlinks refuses it to open().
  const auto planted = shared + "/report.json";
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  ASSERT_EQ(::lchown(planted.c_str(), 4321, 4321), 0);
  const auto why = write_error(planted, "overwritten");
  EXPECT_NE(why.find("'" + planted + "'"), std::string::npos) << why;
  EXPECT_NE(why.find("protected_symlinks"), std::string::npos) << why;
  EXPECT_THROW(check_output(planted), UsageError);
  EXPECT_EQ(slurp(victim), "keep me");
  // The caller's own link there is followed, as the kernel follows it.
  ASSERT_EQ(::lchown(planted.c_str(), 0, 0), 0);
  EXPECT_EQ(write_error(planted, "mine"), "");
  EXPECT_EQ(slurp(victim), "mine");
}

TEST(OutputFile, ANonRootUserWritesToANullDevice) {
  SKIP_UNLESS_ROOT();
  Folder folder;
  ASSERT_EQ(::chmod(folder.path.c_str(), 0755), 0);  // others may reach the node, not write here
  const auto null = make_char_device(folder, "null", 3);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    std::ostringstream out;
    try {
      write_output(null, "as nobody", out);
    } catch (const UsageError&) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: refused, as when the folder's writability was asked";
  expect_char_device(null, 3);
}

// --- every output option, through the binary -------------------------------------------------

// Each output option of the commands that need no GPU (run, info, profile and --json-dir write
// through the same save_outputs and write_output).
std::vector<std::vector<std::string>> every_output_option(const std::string& target) {
  return {
      {"report", kTranspose, "-o", target},
      {"report", kStreams, "--trace", target},
      {"compare", kTranspose, "--variants", "naive,tiled", "--json", target},
      {"compare", kTranspose, "--variants", "naive,tiled", "--html", target},
      {"diagnose", "--report", kTranspose, "--json", target},
      {"list", "--json", target},
  };
}

std::string words(const std::vector<std::string>& args) {
  std::string all = "gpulab";
  for (const auto& a : args) all += " " + a;
  return all;
}

TEST(OutputOptions, EveryOneWritesThroughANullDeviceAndLeavesIt) {
  SKIP_UNLESS_ROOT();
  Folder folder;
  const auto null = make_char_device(folder, "null", 3);
  for (const auto& args : every_output_option(null)) {
    const auto o = run_gpulab(args, folder.path);
    EXPECT_EQ(o.code, 0) << words(args) << "\n" << o.err;
    expect_char_device(null, 3);
    EXPECT_EQ(folder.names(), std::vector<std::string>{"null"}) << words(args);
  }
}

TEST(OutputOptions, EveryOneSaysAFullDeviceIsFull) {
  SKIP_UNLESS_ROOT();
  Folder folder;
  const auto full = make_char_device(folder, "full", 7);
  for (const auto& args : every_output_option(full)) {
    const auto o = run_gpulab(args, folder.path);
    EXPECT_EQ(o.code, 2) << words(args) << "\n" << o.err;
    EXPECT_NE(o.err.find("cannot write '" + full + "': no space left on device"), std::string::npos)
        << words(args) << "\n"
        << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line\n" << o.err;
    expect_char_device(full, 7);
  }
}

TEST(OutputOptions, EveryOneWritesThroughAFifo) {
  Folder folder;
  const auto fifo = folder / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& args : every_output_option(fifo)) {
    std::string got;
    std::thread reader([&] { got = read_fifo(fifo); });
    const auto o = run_gpulab(args, folder.path);
    reader.join();
    EXPECT_EQ(o.code, 0) << words(args) << "\n" << o.err;
    EXPECT_GT(got.size(), 100u) << words(args) << ": the reader got the output";
    EXPECT_EQ(node_of(fifo).type, static_cast<mode_t>(S_IFIFO)) << words(args);
  }
  EXPECT_EQ(folder.names(), std::vector<std::string>{"fifo"});
}

TEST(OutputOptions, DashIsStandardOutputAndTheTextGoesToStderr) {
  Folder folder;
  auto o = run_gpulab({"diagnose", "--report", kTranspose, "--json", "-"}, folder.path);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(nlohmann::json::accept(o.out)) << "stdout carries the JSON alone";
  EXPECT_NE(o.err.find("tiled"), std::string::npos) << "the text report, on stderr:\n" << o.err;
  o = run_gpulab({"report", kTranspose, "-o", "-"}, folder.path);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("<!DOCTYPE html>", 0), 0u) << o.out.substr(0, 100);
  EXPECT_EQ(o.err, "") << "no 'wrote -'";
  o = run_gpulab({"list", "--json", "-"}, folder.path);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(nlohmann::json::parse(o.out).is_array());
  EXPECT_NE(o.err.find("transpose"), std::string::npos) << "the listing, on stderr";
  EXPECT_TRUE(folder.names().empty()) << "no file named '-'";
  o = run_gpulab({"report", kTranspose, "-o", "-", "--trace", "-"}, folder.path);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("'-' (standard output) can be given once"), std::string::npos) << o.err;
}

TEST(OutputOptions, StandardOutputByNameGetsTheFileAfterTheText) {
  // The child's own descriptor 1, the test's pipe (as /dev/stdout names it; never that shared
  // link itself, which a wrong build could replace).
  Folder folder;
  const auto o =
      run_gpulab({"diagnose", "--report", kTranspose, "--json", "/proc/self/fd/1"}, folder.path);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto json = o.out.find("\n{\n  \"argv\"");
  ASSERT_NE(json, std::string::npos) << o.out.substr(0, 200);
  EXPECT_NE(o.out.substr(0, json).find("tiled"), std::string::npos) << "the text report first";
  EXPECT_TRUE(nlohmann::json::accept(o.out.substr(json))) << "then the JSON, whole";
  EXPECT_TRUE(folder.names().empty());
}

TEST(OutputOptions, DashIsStandardInputForEveryInput) {
  Folder folder;
  auto o = run_gpulab({"diagnose", "--report", "-", "--format", "json"}, folder.path, kTranspose);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(nlohmann::json::accept(o.out));
  o = run_gpulab({"compare", "-", kTranspose}, folder.path, kTranspose);
  EXPECT_EQ(o.code, 0) << o.err;
  o = run_gpulab({"report", "-", "-o", folder / "page.html"}, folder.path, kTranspose);
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(std::filesystem::exists(folder / "page.html"));
  o = run_gpulab({"compare", "-", "-"}, folder.path, kTranspose);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("'-' (standard input) can be given once"), std::string::npos) << o.err;
  o = run_gpulab({"diagnose", "--report", "-"}, folder.path);  // an empty standard input
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("'-'"), std::string::npos) << o.err;
}

TEST(OutputOptions, AFailingSaveStillPrintsTheReport) {
  SKIP_UNLESS_ROOT();
  Folder folder;
  const auto full = make_char_device(folder, "full", 7);
  auto o = run_gpulab({"diagnose", "--report", kTranspose, "--json", full}, folder.path);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.out.find("tiled"), std::string::npos) << "the report, printed first:\n" << o.out;
  EXPECT_EQ(o.err, "gpulab: warning: cannot write '" + full + "': no space left on device\n");
  o = run_gpulab({"compare", kTranspose, "--variants", "naive,tiled", "--json", full}, folder.path);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.out.find("naive"), std::string::npos) << o.out;
}

TEST(OutputOptions, TheShellSavesThroughADeviceAndSaysWhenItIsFull) {
  SKIP_UNLESS_ROOT();
  Folder folder;
  const auto null = make_char_device(folder, "null", 3);
  const auto full = make_char_device(folder, "full", 7);
  const auto script = folder / "commands";
  std::ofstream(script) << "diagnose --report " << kTranspose << "\nsave " << null << "\nsave "
                        << full << "\nquit\n";
  const auto o = run_gpulab({"shell"}, folder.path, script);
  EXPECT_NE(o.err.find("saved " + null), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("cannot write '" + full + "': no space left on device"), std::string::npos)
      << o.err;
  expect_char_device(null, 3);
  expect_char_device(full, 7);
}

TEST(OutputOptions, TheShellsHistoryIsWrittenInPlace) {
  SKIP_UNLESS_ROOT();
  if (!app::has_line_editing()) GTEST_SKIP() << "built without libedit: no history file";
  Folder folder;
  const auto null = make_char_device(folder, "null", 3);
  std::istringstream none;
  {
    auto reader = app::make_line_reader(none, true, null);  // a history kept nowhere, as asked
    reader->remember("list");
  }
  expect_char_device(null, 3);
  EXPECT_EQ(folder.names(), std::vector<std::string>{"null"}) << "no temporary file left";
}

}  // namespace
}  // namespace gpulab
