// The axes of `gpulab sweep`: each form of VALUES, the points of several axes (product and
// --zip), and every way an axis is refused before any GPU work.
#include "app/sweep_axes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reports/base/errors.hpp"

namespace gpulab::app {
namespace {

using Values = std::vector<std::int64_t>;

labs::LabSpec demo_lab() {
  labs::LabSpec lab;
  lab.name = "demo";
  lab.params = {{"size", "elements", 1 << 20, 1, 1 << 28, true},
                {"block", "threads per block", 256, 32, 1024, false}};
  return lab;
}

// The message an axis is refused with; "" when it is not.
std::string refusal(const std::vector<std::string>& texts, bool zip = false, bool yes = false) {
  try {
    std::vector<SweepAxis> axes;
    for (const auto& t : texts) axes.push_back(parse_axis(t));
    const auto points = sweep_points(axes, zip);
    check_sweep(demo_lab(), axes, points.size(), yes);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepAxes, ListsGeometricAndLinearRangesWithBinarySuffixes) {
  EXPECT_EQ(parse_axis("size=1024,4096,16384").values, (Values{1024, 4096, 16384}));
  EXPECT_EQ(parse_axis("size=1Ki:16Ki:*4").values, (Values{1024, 4096, 16384}));
  EXPECT_EQ(parse_axis("size=1Mi:1Gi:*4").values.size(), 6u);
  EXPECT_EQ(parse_axis("size=1Mi:1Gi:*4").values.back(), std::int64_t{1} << 30);
  EXPECT_EQ(parse_axis("block=32:1024:+32").values.size(), 32u);
  EXPECT_EQ(parse_axis("block=32:100:+32").values, (Values{32, 64, 96})) << "up to STOP";
  EXPECT_EQ(parse_axis("block=32:32:*2").values, (Values{32}));
  EXPECT_EQ(parse_axis("size=3Gi").values, (Values{std::int64_t{3} << 30}));
  const auto axis = parse_axis("block=64,128");
  EXPECT_EQ(axis.name, "block");
  EXPECT_EQ(axis.typed, "block=64,128");
  // Near the top of the 64-bit range, a geometric range stops without overflowing.
  EXPECT_EQ(parse_axis("size=1Gi:8000000000Gi:*1024").values.size(), 4u);
}

TEST(SweepAxes, ThePointsAreTheProductOrTheZippedValues) {
  const std::vector<SweepAxis> axes{parse_axis("size=1Ki,2Ki"), parse_axis("block=32,64,128")};
  const auto product = sweep_points(axes, false);
  ASSERT_EQ(product.size(), 6u);
  EXPECT_EQ(product[0], (SweepPoint{{"size", 1024}, {"block", 32}}));
  EXPECT_EQ(product[2], (SweepPoint{{"size", 1024}, {"block", 128}})) << "the first axis slowest";
  EXPECT_EQ(product[3], (SweepPoint{{"size", 2048}, {"block", 32}}));

  const std::vector<SweepAxis> pairs{parse_axis("size=1Ki,2Ki"), parse_axis("block=32,64")};
  const auto zipped = sweep_points(pairs, true);
  ASSERT_EQ(zipped.size(), 2u);
  EXPECT_EQ(zipped[1], (SweepPoint{{"size", 2048}, {"block", 64}}));
}

TEST(SweepAxes, AxesAreRefusedBeforeAnyGpuWorkNamingWhatWasTyped) {
  EXPECT_EQ(refusal({"size=1Ki:1Mi:*2"}), "");
  const struct {
    std::vector<std::string> axes;
    std::string says;
  } cases[] = {
      {{"size"}, "--axis: 'size' is not NAME=VALUE"},
      {{"size=1Ki:1Mi"}, "'1Ki:1Mi' is not a range (START:STOP:*FACTOR or START:STOP:+STEP)"},
      {{"size=1Ki:1Mi:/2"}, "is not a range"},
      {{"size=1Mi:1Ki:*2"},
       "--axis size=1Mi:1Ki:*2: '1Mi:1Ki:*2' runs backwards (1Ki is below 1Mi)"},
      {{"size=1:1Ki:*1"}, "never grows (a geometric range needs a factor of 2 or more"},
      {{"size=0:1Ki:*2"}, "never grows"},
      {{"block=32:1024:+0"}, "never grows (a linear range needs a step of 1 or more)"},
      {{"size=1:1Gi:+1"}, "holds more than 4096 values"},
      {{"size=1Ki,,2Ki"}, "empty"},
      {{"size=1.5Ki"}, "--axis size=1.5Ki: '1.5Ki' is not a whole number (with Ki, Mi or Gi"},
      {{"size=1Ti"}, "'1Ti' is not a whole number"},
      {{"size=9000000000Gi"}, "out of the 64-bit range"},
      {{"blok=32"}, "--axis blok=32: lab 'demo' has no parameter 'blok': did you mean 'block'?"},
      {{"size=0"},
       "--axis size=0: 0 is out of range for lab 'demo' (size: allowed 1 to 268435456)"},
      {{"block=32:2048:*2"}, "2048 is out of range for lab 'demo' (block: allowed 32 to 1024)"},
      {{"block=32", "block=64"}, "--axis block=64: 'block' has an axis already"},
      {{"size=1Ki,2Ki", "block=32,64,128"}, ""},
      {{"size=1Ki:4Ki:*2", "block=32,64"}, "--zip pairs the axes' values one by one"},
      {{"size=1:100:+1"}, "the sweep has 100 points, more than 64 without --yes"},
      {{}, "sweep needs an axis: --axis NAME=VALUES (size, or a parameter of lab 'demo')"},
  };
  for (const auto& c : cases) {
    const bool zip = c.says.find("--zip") != std::string::npos;
    const std::string said = refusal(c.axes, zip);
    if (c.says.empty()) {
      EXPECT_EQ(said, "") << c.axes.front();
    } else {
      EXPECT_NE(said.find(c.says), std::string::npos)
          << (c.axes.empty() ? "(none)" : c.axes.front()) << "\n"
          << said;
    }
  }
  EXPECT_EQ(refusal({"size=1:100:+1"}, false, true), "") << "--yes runs it";
}

}  // namespace
}  // namespace gpulab::app
