#include <limits>

#include <gtest/gtest.h>

#include "reports/render/table.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

TEST(Units, Seconds) {
  EXPECT_EQ(units::seconds(1.052e-3), "1.05 ms");
  EXPECT_EQ(units::seconds(148.2e-6), "148 µs");
  EXPECT_EQ(units::seconds(12e-9), "12.0 ns");
  EXPECT_EQ(units::seconds(2.5), "2.50 s");
}

// A value that three digits round up to 1000 of a unit is shown in the next: the mean of a million
// 1 us launches (0.99999... us) is "1.00 µs", as their minimum is, not "1000 ns".
TEST(Units, AValueRoundingToAThousandTakesTheNextUnit) {
  EXPECT_EQ(units::seconds(0.9999999e-6), "1.00 µs");
  EXPECT_EQ(units::seconds(999.4e-9), "999 ns");
  EXPECT_EQ(units::seconds(999.7e-6), "1.00 ms");
  EXPECT_EQ(units::seconds(0.9996), "1.00 s");
  EXPECT_EQ(units::bytes(999.6), "1.00 kB");
  EXPECT_EQ(units::bytes(999.4), "999 B");
}

TEST(Units, BytesAreSi) {
  EXPECT_EQ(units::bytes(268435456), "268 MB");
  EXPECT_EQ(units::bytes(512), "512 B");
  EXPECT_EQ(units::bytes(60e6), "60.0 MB");
  EXPECT_EQ(units::bytes(1.5e12), "1.50 TB");
}

TEST(Units, BandwidthPercentRatioCount) {
  EXPECT_EQ(units::bandwidth(4229e9), "4,229 GB/s");
  EXPECT_EQ(units::percent(0.8612), "86.1%");
  EXPECT_EQ(units::ratio(32.5), "32.5x");
  EXPECT_EQ(units::count(1048576), "1,048,576");
  EXPECT_EQ(units::count(2.5), "2.50");
}

TEST(Units, HugeAndNonFiniteValuesKeepTheirSign) {
  // Values a report read from a user's file can hold: no rounding past the end of long long.
  EXPECT_EQ(units::seconds(-9.3e18), "-9.3e+18 s");
  EXPECT_EQ(units::bandwidth(1e30), "1e+21 GB/s");
  EXPECT_EQ(units::bytes(2e27), "2e+15 TB");
  EXPECT_EQ(units::number(999e12), "999,000,000,000,000");
  EXPECT_EQ(units::number(-1234.4), "-1,234");
  EXPECT_EQ(units::seconds(std::numeric_limits<double>::infinity()), "inf s");
  EXPECT_EQ(units::number(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(Units, MetricUsesUnit) {
  EXPECT_EQ(units::metric(1.5e6, metrics::Unit::nanoseconds), "1.50 ms");
  EXPECT_EQ(units::metric(87.26, metrics::Unit::percent), "87.3%");
  EXPECT_EQ(units::metric(0.5, metrics::Unit::fraction), "50.0%");
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
}  // namespace gpulab::report
