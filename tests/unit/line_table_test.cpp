// From an instruction to a line: nvdisasm's line-annotated SASS read into functions, and the
// labs' own line tables (tests/fixtures/sass, written by scripts/line_tables.sh from a build
// with -lineinfo) putting the instructions of each line a lab marks `// PROBLEM:` on that line.
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/source/nvdisasm.hpp"
#include "unit/lab_markers.hpp"

namespace gpulab::report {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = test::kSourceRoot;

// What nvdisasm 13.2 prints for a two-line kernel with an inlined helper (nvcc 13.0 -lineinfo,
// sm_90), shortened: its banner, directives, labels, annotations and instructions.
const char* const kListing =
    R"(	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"
//--------------------- .text._Z5naivePKfPfi --------------------------
	.section	.text._Z5naivePKfPfi,"ax",@progbits
_Z5naivePKfPfi:
	//## File "/src/k.cu", line 2
        /*0000*/                   LDC R1, c[0x0][0x28] ;
	//## File "/src/k.cu", line 6
        /*0100*/                   LDG.E R2, desc[UR4][R2.64] ;
        /*0120*/                   IMAD.WIDE R4, R7, 0x4, R4 ;
	//## File "/src/k.cu", line 1 inlined at "/src/k.cu", line 6
	//## File "/src/k.cu", line 6
        /*0130*/                   FADD R7, R2, R2 ;
	//## File "/src/k.cu", line 6
        /*0140*/                   STG.E desc[UR4][R4.64], R7 ;
.L_x_1:
        /*0150*/               @P0 EXIT ;
//--------------------- .text._Z4bare --------------------------
_Z4bare:
        /*0000*/                   EXIT ;
        /*0010*/                   BRA `(.L_x_0);
)";

TEST(LineTable, ReadsFunctionsInstructionsAndTheirLines) {
  auto functions = read_nvdisasm(kListing);
  ASSERT_EQ(functions.size(), 2u);
  const auto& naive = functions[0];
  EXPECT_EQ(naive.function, "_Z5naivePKfPfi");
  ASSERT_EQ(naive.instructions.size(), 6u);
  EXPECT_EQ(naive.instructions[1].offset, 0x100u);
  EXPECT_EQ(naive.instructions[1].sass, "LDG.E R2, desc[UR4][R2.64]");
  EXPECT_EQ(naive.instructions[1].where->line, 6);
  EXPECT_EQ(naive.instructions[2].where->line, 6) << "a line holds until the next annotation";
  // An inlined instruction: its own line first, with the call site.
  const auto& inlined = *naive.instructions[3].where;
  EXPECT_EQ(inlined.line, 1);
  EXPECT_EQ(inlined.inlined_file, "/src/k.cu");
  EXPECT_EQ(inlined.inlined_line, 6);
  EXPECT_EQ(naive.instructions[4].where->inlined_line, 0) << "the next annotation starts over";
  EXPECT_EQ(naive.instructions[5].sass, "@P0 EXIT");
  EXPECT_TRUE(naive.has_lines());
  // A function compiled without -lineinfo: offsets, no lines.
  EXPECT_FALSE(functions[1].has_lines());
  EXPECT_EQ(functions[1].instructions.at(1).sass, "BRA `(.L_x_0)");
  EXPECT_FALSE(functions[1].instructions[0].where.has_value()) << "a banner resets the line";

  relative_to(functions, "/src");
  EXPECT_EQ(functions[0].instructions[3].where->file, "k.cu");
  EXPECT_EQ(functions[0].instructions[3].where->inlined_file, "k.cu");
}

TEST(LineTable, AnInstructionOutsideAFunctionIsNotNvdisasm) {
  try {
    read_nvdisasm("\t.target sm_90\n        /*0000*/   EXIT ;\n");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "nvdisasm listing, line 2: an instruction before any function");
  }
  EXPECT_TRUE(read_nvdisasm("").empty());
}

// The instruction that carries each lab's problem, where one opcode does: what the marked line
// must hold (a prefix of the instruction, its predicate left out).
const std::map<std::string, std::vector<std::string>>& expected_opcodes() {
  static const std::map<std::string, std::vector<std::string>> o = {
      {"transpose", {"STG", "LDS"}},  // the strided store; the tile's column read
      {"coalescing", {"LDG"}},
      {"aos_soa", {"LDG"}},
      {"vectorize", {"LDG"}},
      {"atomics", {"REDG"}},  // a reduction to global memory: no value comes back
      {"pitched", {"LDG"}},
      {"matmul", {"LDG"}},
      {"async_copy", {"LDG"}},  // the load that the copy to shared memory waits on
      {"constant_memory", {"LDC"}},
      {"reduction", {"LDS"}},
      {"spill", {"LDL"}},
  };
  return o;
}

std::string opcode(const std::string& sass) {
  std::string s = sass;
  if (!s.empty() && s[0] == '@') s = s.substr(s.find(' ') + 1);
  return s.substr(0, s.find_first_of(" ."));
}

TEST(LineTable, EachLabsMarkedLinesHoldTheirInstructions) {
  int labs = 0;
  for (const auto& entry : fs::directory_iterator(kRoot / "labs")) {
    if (entry.path().extension() != ".cu") continue;
    const auto marks = test::marked_lines(entry.path());
    if (marks.empty()) continue;
    ++labs;
    const std::string lab = entry.path().stem().string();
    const std::string file = "labs/" + entry.path().filename().string();
    const fs::path fixture = kRoot / "tests/fixtures/sass" / (lab + ".sass");
    ASSERT_TRUE(fs::exists(fixture)) << fixture << ": run scripts/line_tables.sh";
    const auto functions = read_nvdisasm(read_file(fixture.string()));
    ASSERT_FALSE(functions.empty()) << fixture;
    const auto expected =
        expected_opcodes().count(lab) ? expected_opcodes().at(lab) : std::vector<std::string>{};
    for (std::size_t k = 0; k < marks.size(); ++k) {
      std::set<std::string> opcodes;
      for (const auto& f : functions)
        for (const auto& i : f.instructions)
          if (i.where && ((i.where->file == file && i.where->line == marks[k]) ||
                          (i.where->inlined_file == file && i.where->inlined_line == marks[k])))
            opcodes.insert(opcode(i.sass));
      EXPECT_FALSE(opcodes.empty()) << file << ":" << marks[k] << " has no instruction";
      if (k < expected.size())
        EXPECT_TRUE(opcodes.count(expected[k]))
            << file << ":" << marks[k] << " holds no " << expected[k] << " ("
            << ::testing::PrintToString(opcodes) << ")";
    }
  }
  EXPECT_GE(labs, 12) << "the labs' sources were found";
}

}  // namespace
}  // namespace gpulab::report
