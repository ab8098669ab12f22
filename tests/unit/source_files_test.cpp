// The texts of a kernel's source files: read from disk only when they are regular files of a
// readable size (a FIFO named by a line table must not block the view), and copied into the
// report by `run --embed-source`, which needs --source.
#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "app/source_files.hpp"
#include "unit/run_cli.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab::app {
namespace {

report::KernelSource source_naming(const std::vector<std::string>& files) {
  report::KernelSource s;
  for (const auto& f : files) {
    report::SassInstruction i;
    i.where = report::SourceLine{f, 3};
    s.instructions.push_back(i);
  }
  s.instructions.back().where->inlined_file = files.front();
  s.instructions.back().where->inlined_line = 9;
  return s;
}

TEST(SourceFiles, EmbedsTheFilesTheLinesNameAndListsThoseItCannotRead) {
  test::TempFolder folder;
  std::ofstream(folder / "k.cu") << "__global__ void k() {}\n";
  std::ofstream(folder / "big.cuh") << std::string(kMaxSourceBytes + 1, 'x');
  ASSERT_EQ(::mkfifo((folder / "pipe.cu").c_str(), 0600), 0);
  ASSERT_EQ(::mkdir((folder / "dir.cu").c_str(), 0700), 0);
  auto s = source_naming({folder / "k.cu", folder / "big.cuh", folder / "pipe.cu",
                          folder / "dir.cu", folder / "gone.cu"});
  const auto missing = embed_files(s);  // would block on the FIFO if it opened it
  ASSERT_EQ(s.files.size(), 1u);
  EXPECT_EQ(s.files.at(folder / "k.cu"), "__global__ void k() {}\n");
  EXPECT_EQ(missing.size(), 4u);
}

TEST(SourceFiles, TheReportsCopyComesFirst) {
  report::KernelSource s;
  s.files["k.cu"] = "the report's copy";
  EXPECT_EQ(source_text(s)("k.cu"), "the report's copy");
  EXPECT_FALSE(source_text(s)("nosuch/k.cu").has_value());
}

TEST(SourceFiles, EmbedSourceNeedsSource) {
  const auto r = test::run_cli({"run", "transpose", "--embed-source"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--embed-source copies the files --source collects lines of: add --source"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace gpulab::app
