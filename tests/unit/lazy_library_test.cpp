// CUPTI and cuBLAS are loaded at first use (reports/base/lazy_library.hpp), not linked: gpulab
// starts, and its offline commands run, where the CUDA toolkit is not installed. These tests keep
// it so (nobody links the libraries again), check the loader's messages and exit code when a
// library is missing, and that every function of the trampoline lists is in the toolkit's
// libraries.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cupti/cupti_library.hpp"
#include "cupti/range_profiler.hpp"
#include "labs/harness/cublas_library.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/lazy_library.hpp"

namespace gpulab {
namespace {

// stdout and stderr of a shell command, and its exit status.
int shell(const std::string& command, std::string& output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buf{};
  output.clear();
  while (std::fgets(buf.data(), buf.size(), pipe)) output += buf.data();
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

LazyLibrarySpec spec(const char* soname, const char* dirs, const char* env = "",
                     const char* companions = "") {
  return {"Testlib", soname, dirs, env, companions, "for this test", "install the test library"};
}

// The message a LibraryMissing carries, or "" when `f` throws none.
template <typename F>
std::string missing_message(F&& f) {
  try {
    f();
  } catch (const LibraryMissing& e) {
    EXPECT_EQ(e.code(), ExitCode::missing_library);
    EXPECT_EQ(static_cast<int>(e.code()), 7) << "README.md documents 7";
    return e.what();
  }
  return "";
}

TEST(LazyLibrary, ResolvesItsFunctionsAtFirstUse) {
  const char* names[] = {"cos", "sqrt"};
  LazyLibrary libm(spec("libm.so.6", ""), names, 2);
  using Fn = double (*)(double);
  EXPECT_DOUBLE_EQ(reinterpret_cast<Fn>(libm.function(1))(16.0), 4.0);
  EXPECT_DOUBLE_EQ(reinterpret_cast<Fn>(libm.function(0))(0.0), 1.0);
  EXPECT_TRUE(libm.available());
  EXPECT_NE(libm.path().find("libm"), std::string::npos) << libm.path();
}

// Not on the loader's path: found in the spec's folders, tried in turn (as the toolkit's folder
// is where it is not in ld.so.conf and LD_LIBRARY_PATH does not name it).
TEST(LazyLibrary, TriesItsFoldersAfterTheLoadersPath) {
  const char* names[] = {"cos"};
  LazyLibrary libm(spec("libm.so.6", ""), names, 1);
  ASSERT_TRUE(libm.available());
  const std::string dir = ::testing::TempDir() + "lazy_library_folder";
  const std::string file = dir + "/libgpulab_in_folder.so.6";
  ASSERT_EQ(std::system(("mkdir -p " + dir + " && ln -sf " + libm.path() + " " + file).c_str()), 0);
  const std::string dirs = "/nonexistent:" + dir;
  LazyLibrary moved(spec("libgpulab_in_folder.so.6", dirs.c_str()), names, 1);
  EXPECT_TRUE(moved.available()) << "found as " << file;  // (the libm already loaded, by inode)
  LazyLibrary elsewhere(spec("libgpulab_in_folder.so.6", "/nonexistent"), names, 1);
  EXPECT_FALSE(elsewhere.available());
}

// Found in a folder of its own, the libraries it opens by name (CUPTI's libnvperf_host.so) are
// loaded from beside it, so that its own dlopen of the name finds them (by their soname).
TEST(LazyLibrary, LoadsItsCompanionsFromItsFolder) {
  if (dlopen("libz.so.1", RTLD_NOW | RTLD_NOLOAD)) GTEST_SKIP() << "libz is loaded already";
  const char* names[] = {"cos"};
  LazyLibrary libm(spec("libm.so.6", ""), names, 1);
  ASSERT_TRUE(libm.available());
  const std::string dir = ::testing::TempDir() + "lazy_library_companions";
  const std::string libz = "/lib/x86_64-linux-gnu/libz.so.1";
  if (::access(libz.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << libz;
  ASSERT_EQ(std::system(("mkdir -p " + dir + " && ln -sf " + libm.path() + " " + dir +
                         "/libgpulab_with_companion.so.6 && ln -sf " + libz + " " + dir + "/")
                            .c_str()),
            0);
  LazyLibrary found(spec("libgpulab_with_companion.so.6", dir.c_str(), "", "libz.so.1"), names, 1);
  ASSERT_TRUE(found.available());
  EXPECT_NE(dlopen("libz.so.1", RTLD_NOW | RTLD_NOLOAD), nullptr) << "the companion is loaded";
}

TEST(LazyLibrary, AMissingLibraryIsOneLineWithWhereAndWhatToDo) {
  const char* names[] = {"f"};
  LazyLibrary absent(spec("libgpulab_absent.so.13", "/nonexistent/one:/nonexistent/two"), names, 1);
  const std::string message = missing_message([&] { absent.function(0); });
  EXPECT_EQ(message,
            "Testlib is needed for this test, but libgpulab_absent.so.13 is not on the library "
            "path nor in /nonexistent/one, /nonexistent/two: install the test library, or add "
            "the folder that holds libgpulab_absent.so.13 to LD_LIBRARY_PATH");
  EXPECT_EQ(missing_message([&] { absent.require(); }), message) << "the same answer every time";
  EXPECT_FALSE(absent.available());
  EXPECT_EQ(absent.path(), "");
}

TEST(LazyLibrary, AFileThatIsFoundButDoesNotLoadIsNamedWithTheLoadersReason) {
  const std::string dir = ::testing::TempDir() + "lazy_library_broken";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  std::ofstream(dir + "/libgpulab_broken.so.13") << "not an ELF file\n";
  const char* names[] = {"f"};
  LazyLibrary broken(spec("libgpulab_broken.so.13", dir.c_str()), names, 1);
  const std::string message = missing_message([&] { broken.require(); });
  EXPECT_NE(message.find("libgpulab_broken.so.13 cannot be loaded (" + dir), std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(LazyLibrary, ALibraryWithoutAFunctionOfTheListIsRefusedWhole) {
  const char* names[] = {"cos", "gpulab_no_such_function"};
  LazyLibrary old(spec("libm.so.6", ""), names, 2);
  const std::string message = missing_message([&] { old.function(0); });
  EXPECT_NE(message.find("has no gpulab_no_such_function: it is older than this gpulab needs"),
            std::string::npos)
      << message;
  EXPECT_FALSE(old.available());
}

TEST(LazyLibrary, TheEnvironmentVariableNamesTheOnlyFileTried) {
  const char* names[] = {"cos"};
  ::setenv("GPULAB_TEST_LIBRARY", "libm.so.6", 1);
  LazyLibrary chosen(spec("libgpulab_absent.so.13", "", "GPULAB_TEST_LIBRARY"), names, 1);
  EXPECT_TRUE(chosen.available()) << "loaded from the variable, not the soname";
  ::setenv("GPULAB_TEST_LIBRARY", "/nonexistent/libm.so.6", 1);
  LazyLibrary wrong(spec("libm.so.6", "", "GPULAB_TEST_LIBRARY"), names, 1);
  const std::string message = missing_message([&] { wrong.require(); });
  EXPECT_NE(message.find("GPULAB_TEST_LIBRARY=/nonexistent/libm.so.6 cannot be loaded"),
            std::string::npos)
      << message;
  ::unsetenv("GPULAB_TEST_LIBRARY");
}

// The real trampoline lists against the toolkit gpulab was built with (its libraries load
// without a GPU or driver): every function is there, and CUPTI answers.
TEST(LazyLibrary, CuptiResolvesEveryFunctionOfItsList) {
  EXPECT_NO_THROW(cupti::require_library());
  EXPECT_NE(cupti::library_path().find("libcupti.so"), std::string::npos);
  EXPECT_GE(cupti::api_version(), 130000);
}

TEST(LazyLibrary, CublasResolvesEveryFunctionOfItsList) { EXPECT_NO_THROW(labs::require_cublas()); }

// With CUPTI made unfindable, what a command that needs it gets: the one-line error and exit 7.
// In a child process, which has not loaded CUPTI yet.
TEST(LazyLibraryDeathTest, MissingCuptiIsExitCode7WithTheRemedy) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  const auto needs_cupti = [] {
    ::setenv("GPULAB_CUPTI_LIBRARY", "/nonexistent/libcupti.so.13", 1);
    if (cupti::api_version() != 0) std::_Exit(1);  // `info` reports it, without failing
    try {
      cupti::require_library();
    } catch (const Error& e) {
      std::fprintf(stderr, "gpulab: error: %s\n", e.what());
      std::_Exit(static_cast<int>(e.code()));
    }
    std::_Exit(0);
  };
  EXPECT_EXIT(needs_cupti(), ::testing::ExitedWithCode(7),
              "gpulab: error: CUPTI is needed to read counters and trace kernels \\(run, "
              "diagnose, selftest\\), but GPULAB_CUPTI_LIBRARY=/nonexistent/libcupti.so.13 "
              "cannot be loaded");
}

// The executable does not link CUPTI or cuBLAS (a static cudart, no libcuda either), and does
// not export the trampolines, so the libraries' calls to their own functions never reach them.
TEST(LazyLibrary, TheBinaryNeedsNeitherCuptiNorCublas) {
  std::string out;
  ASSERT_EQ(shell(std::string("readelf -dW ") + GPULAB_BINARY, out), 0) << out;
  EXPECT_NE(out.find("(NEEDED)"), std::string::npos) << out;
  for (const char* lib : {"libcupti", "libcublas", "libnvperf", "libcuda.", "libcudart"})
    EXPECT_EQ(out.find(lib), std::string::npos) << lib << " is linked again:\n" << out;
  ASSERT_EQ(shell(std::string("readelf --dyn-syms -W ") + GPULAB_BINARY, out), 0) << out;
  for (const char* prefix : {" cupti", " cublas"})
    EXPECT_EQ(out.find(prefix), std::string::npos) << prefix << "* in the dynamic symbols:\n"
                                                   << out;
}

// The commands that need no GPU never load the libraries (LD_DEBUG lists every file the loader
// opens, dlopen's included), and run with them made unfindable.
TEST(LazyLibrary, OfflineCommandsLoadNeitherLibrary) {
  const std::string fixture = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";
  const std::string html = ::testing::TempDir() + "lazy_library_report.html";
  const std::string env =
      "LD_DEBUG=files GPULAB_CUPTI_LIBRARY=/nonexistent/libcupti.so.13 "
      "GPULAB_CUBLAS_LIBRARY=/nonexistent/libcublas.so.13 ";
  for (const std::string& args : std::vector<std::string>{
           "list", "--help", "diagnose --report " + fixture, "compare " + fixture + " " + fixture,
           "report " + fixture + " -o " + html, "complete run tr", "man"}) {
    std::string out;
    EXPECT_EQ(shell(env + GPULAB_BINARY + " " + args, out), 0) << args << "\n" << out;
    std::istringstream lines(out);  // the loader's lines name the files: "file=libcupti.so.13"
    for (std::string line; std::getline(lines, line);)
      for (const char* lib : {"libcupti", "libcublas", "nonexistent"})
        EXPECT_FALSE(line.find("file=") != std::string::npos && line.find(lib) != std::string::npos)
            << "`gpulab " << args << "` loads " << lib << ": " << line;
  }
}

}  // namespace
}  // namespace gpulab
