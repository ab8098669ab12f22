#include <gtest/gtest.h>

#include "reports/format.hpp"
#include "reports/table.hpp"

namespace gpulab {
namespace {

TEST(Format, Seconds) {
  EXPECT_EQ(fmtx::seconds(1.052e-3), "1.05 ms");
  EXPECT_EQ(fmtx::seconds(148.2e-6), "148 µs");
  EXPECT_EQ(fmtx::seconds(12e-9), "12.0 ns");
  EXPECT_EQ(fmtx::seconds(2.5), "2.50 s");
}

TEST(Format, BytesAreSi) {
  EXPECT_EQ(fmtx::bytes(268435456), "268 MB");
  EXPECT_EQ(fmtx::bytes(512), "512 B");
  EXPECT_EQ(fmtx::bytes(60e6), "60.0 MB");
  EXPECT_EQ(fmtx::bytes(1.5e12), "1.50 TB");
}

TEST(Format, BandwidthPercentRatioCount) {
  EXPECT_EQ(fmtx::bandwidth(4229e9), "4,229 GB/s");
  EXPECT_EQ(fmtx::percent(0.8612), "86.1%");
  EXPECT_EQ(fmtx::ratio(32.5), "32.5x");
  EXPECT_EQ(fmtx::count(1048576), "1,048,576");
  EXPECT_EQ(fmtx::count(2.5), "2.50");
}

TEST(Format, MetricUsesUnit) {
  EXPECT_EQ(fmtx::metric(1.5e6, metrics::Unit::nanoseconds), "1.50 ms");
  EXPECT_EQ(fmtx::metric(87.26, metrics::Unit::percent), "87.3%");
  EXPECT_EQ(fmtx::metric(0.5, metrics::Unit::fraction), "50.0%");
}

TEST(TextTable, AlignsColumnsAndCountsUtf8AsOneColumn) {
  TextTable t({"name", "time"});
  t.add_row({"a", "1 µs"});
  t.add_row({"longer", "10 ms"});
  EXPECT_EQ(t.render(),
            "name     time\n"
            "a        1 µs\n"
            "longer  10 ms\n");
}

}  // namespace
}  // namespace gpulab
