// `gpulab sweep` stopped by SIGTERM on a real GPU, as `timeout` or a batch system stops it: the
// points measured before the signal are written, and the process then ends by that signal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "gpu/gpu_session.hpp"
#include "reports/report_json.hpp"
#include "reports/sweep_json.hpp"
#include "unit/shell_command.hpp"

namespace gpulab {
namespace {

TEST(SweepGpu, SigtermWritesThePointsMeasuredThenEndsByTheSignal) {
  GPULAB_REQUIRE_GPU();
  test::DefaultSignals terminal_like;  // SIGTERM reaches the sweep whatever ran the tests
  const std::string json =
      ::testing::TempDir() + "/gpulab_sweep_" + std::to_string(::getpid()) + ".json";
  // 113 points of transpose from 1024 to 8192 (the CPU check alone takes most of a second at the
  // large end): far more than 8 s measure. SIGTERM after 8 s; SIGKILL 60 s later, were the stop
  // to hang. --preserve-status gives the sweep's own status: 128 + 15 when SIGTERM ended it.
  const auto run =
      test::sh("timeout --preserve-status -k 60 -s TERM 8 " + std::string(GPULAB_BINARY) +
               " sweep transpose --axis size=1024:8192:+64 --yes --repeat 3 --json " + json +
               " 2>&1 >/dev/null");
  EXPECT_EQ(run.code, 128 + SIGTERM) << run.text;
  EXPECT_NE(run.text.find("gpulab: stopped by SIGTERM after "), std::string::npos) << run.text;
  EXPECT_NE(run.text.find(" of 113 points; the sweep holds those"), std::string::npos) << run.text;
  try {
    const auto sweep = report::sweep_from_document(report::read_json_file(json), json);
    EXPECT_GE(sweep.points.size(), 1u);
    EXPECT_LT(sweep.points.size(), 113u);
    for (const auto& p : sweep.points) EXPECT_EQ(p.report.variants.size(), 5u);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "no sweep written: " << e.what() << "\n" << run.text;
  }
  std::remove(json.c_str());
}

}  // namespace
}  // namespace gpulab
