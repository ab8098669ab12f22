// The ptxas table the build generates from `-Xptxas -v` (cmake/ptxas_table.cmake) is there and
// says what the spill lab's kernels are written to show. An empty or implausible table means the
// capture broke somewhere between the compiler and the generated source.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "labs/harness/ptxas_table.hpp"

namespace gpulab::labs {
namespace {

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : mangled;
}

// The one kernel whose demangled name contains every one of `parts`; fails the test and returns
// nullopt when there is none or more than one.
std::optional<PtxasRecord> kernel(const std::vector<std::string>& parts) {
  std::vector<std::string> matches;
  std::optional<PtxasRecord> found;
  for (const auto& [mangled, record] : ptxas_records()) {
    const std::string name = demangle(mangled);
    bool all = true;
    for (const auto& part : parts) all = all && name.find(part) != std::string::npos;
    if (all) {
      matches.push_back(name);
      found = record;
    }
  }
  if (matches.size() != 1) {
    std::string list;
    for (const auto& m : matches) list += "\n  " + m;
    ADD_FAILURE() << matches.size() << " kernels match " << parts.front() << list;
    return std::nullopt;
  }
  return found;
}

TEST(PtxasTable, HoldsEveryLabKernelPlausibly) {
  const auto& records = ptxas_records();
  // One per lab at the least; far fewer means ptxas's output no longer reaches the table.
  ASSERT_GE(records.size(), 10u);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& [name, record] = records[i];
    if (i > 0) EXPECT_LT(records[i - 1].first, name) << "not sorted or not unique";
    EXPECT_GT(record.registers, 0) << name;
    EXPECT_LE(record.registers, 255) << name;
    // Spilled values live in the stack frame, and a spill is stored before it is loaded: a
    // row that breaks either has taken its figures from the wrong ptxas line.
    if (record.spill_store_bytes > 0) EXPECT_GT(record.stack_frame_bytes, 0) << name;
    if (record.spill_load_bytes > 0) EXPECT_GT(record.spill_store_bytes, 0) << name;
    const auto found = ptxas_record(name);
    ASSERT_TRUE(found.has_value()) << name;
    EXPECT_EQ(found->registers, record.registers) << name;
  }
  EXPECT_FALSE(ptxas_record("no_such_kernel").has_value());
  EXPECT_FALSE(ptxas_record("").has_value());
}

// labs/spill.cu: `capped` holds 64 live values under a 32-register cap and must spill;
// `uncapped` has the registers it needs; `registers` keeps its array in registers; `local-array`
// puts it in a stack frame, which is not a spill.
TEST(PtxasTable, SpillLabKernels) {
  const auto capped = kernel({"::bank_capped("});
  ASSERT_TRUE(capped.has_value());
  EXPECT_GT(capped->spill_store_bytes, 0);
  EXPECT_GT(capped->spill_load_bytes, 0);
  EXPECT_GT(capped->stack_frame_bytes, 0);
  EXPECT_LE(capped->registers, 32);

  const auto uncapped = kernel({"::bank_uncapped("});
  ASSERT_TRUE(uncapped.has_value());
  EXPECT_EQ(uncapped->spill_store_bytes, 0);
  EXPECT_EQ(uncapped->spill_load_bytes, 0);
  EXPECT_GT(uncapped->registers, 32);

  const auto in_registers = kernel({"::smooth_array<", "CompileTimeLength>"});
  ASSERT_TRUE(in_registers.has_value());
  EXPECT_EQ(in_registers->spill_store_bytes, 0);
  EXPECT_EQ(in_registers->spill_load_bytes, 0);
  EXPECT_EQ(in_registers->stack_frame_bytes, 0);

  const auto local_array = kernel({"::smooth_array<", "RunTimeLength>"});
  ASSERT_TRUE(local_array.has_value());
  EXPECT_GE(local_array->stack_frame_bytes, 128);  // float[32]
  EXPECT_EQ(local_array->spill_store_bytes, 0);
  EXPECT_EQ(local_array->spill_load_bytes, 0);
}

}  // namespace
}  // namespace gpulab::labs
