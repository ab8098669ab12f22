// The loader of libraries needed by some commands only (reports/lazy_library.hpp): what it finds,
// where it looks, and its messages and exit code when a library is missing.
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "reports/errors.hpp"
#include "reports/lazy_library.hpp"

namespace gpulab {
namespace {

LazyLibrarySpec spec(const char* soname, const char* dirs, const char* env = "") {
  return {"Testlib", soname, dirs, env, "for this test", "install the test library"};
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

}  // namespace
}  // namespace gpulab
