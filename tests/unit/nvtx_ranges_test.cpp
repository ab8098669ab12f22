// The injection's view of a program's NVTX ranges (inject/nvtx_ranges.hpp), fed the calls as
// CUPTI's NVTX callbacks deliver them: stacks per thread and domain, start/end ranges of the
// process, domain names and registered strings, and the bounds a runaway program meets.
#include <gtest/gtest.h>

#include <thread>

#include <generated_nvtx_meta.h>

#include "inject/nvtx_ranges.hpp"

namespace gpulab::inject {
namespace {

CUpti_NvtxData call(const void* params, const void* returned = nullptr) {
  CUpti_NvtxData data{};
  data.functionParams = params;
  data.functionReturnValue = returned;
  return data;
}

void push(NvtxRanges& ranges, const char* name) {
  nvtxRangePushA_params p{name};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxRangePushA, call(&p));
}

void pop(NvtxRanges& ranges) {
  nvtxRangePop_params p{};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxRangePop, call(&p));
}

nvtxEventAttributes_t attributes(const char* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

TEST(NvtxRanges, StacksStartedRangesAndDomainsMakeTheLaunchsPath) {
  NvtxRanges ranges;
  EXPECT_FALSE(ranges.seen());
  // A pop before any push (a push made before gpulab was there) is ignored.
  pop(ranges);
  const nvtxRangeId_t epoch_id = 41;
  nvtxRangeStartA_params start{"epoch"};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxRangeStartA, call(&start, &epoch_id));
  push(ranges, "train");
  push(ranges, "step");
  // A domain of its own, its range named by a registered string.
  int domain_object = 0;
  const auto domain = reinterpret_cast<nvtxDomainHandle_t>(&domain_object);
  nvtxDomainCreateA_params create{"Domain B"};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxDomainCreateA, call(&create, &domain));
  int string_object = 0;
  const auto io = reinterpret_cast<nvtxStringHandle_t>(&string_object);
  nvtxDomainRegisterStringA_params reg{domain, "io"};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, call(&reg, &io));
  nvtxEventAttributes_t io_range{};
  io_range.version = NVTX_VERSION;
  io_range.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  io_range.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  io_range.message.registered = io;
  nvtxDomainRangePushEx_params domain_push{domain, {&io_range}};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, call(&domain_push));
  EXPECT_TRUE(ranges.seen());

  EXPECT_EQ(ranges.path_now(), (std::vector<std::string>{"epoch", "train", "step", "Domain B@io"}));
  const report::NvtxOpen open = ranges.open_now();
  EXPECT_EQ(open.stacks.at(""), (std::vector<std::string>{"train", "step"}));
  EXPECT_EQ(open.stacks.at("Domain B"), (std::vector<std::string>{"io"}));
  EXPECT_EQ(open.started.at(""), (std::vector<std::string>{"epoch"}));

  // Another thread has stacks of its own and sees the process's start/end ranges.
  std::vector<std::string> other;
  std::thread([&] {
    push(ranges, "loader");
    other = ranges.path_now();
  }).join();
  EXPECT_EQ(other, (std::vector<std::string>{"epoch", "loader"}));

  nvtxDomainRangePop_params domain_pop{domain};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxDomainRangePop, call(&domain_pop));
  pop(ranges);
  nvtxRangeEnd_params end{epoch_id};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxRangeEnd, call(&end));
  EXPECT_EQ(ranges.path_now(), (std::vector<std::string>{"train"}));
  pop(ranges);
  EXPECT_TRUE(ranges.path_now().empty());
}

// A traced program's ranges go out as they close, each with its parents and its times.
TEST(NvtxRanges, ClosedRangesCarryTheirPathAndTimes) {
  NvtxRanges ranges;
  std::uint64_t clock = 1000;
  std::vector<report::RecordedRange> closed;
  ranges.on_close([&] { return clock += 10; },
                  [&](report::RecordedRange&& r) { closed.push_back(std::move(r)); });
  const nvtxRangeId_t id = 3;
  nvtxRangeStartA_params start{"epoch"};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxRangeStartA, call(&start, &id));  // at 1010
  push(ranges, "train");                                               // 1020
  push(ranges, "step");                                                // 1030
  pop(ranges);                                                         // 1040
  nvtxRangeEnd_params end{id};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxRangeEnd, call(&end));  // 1050
  pop(ranges);                                               // 1060
  ASSERT_EQ(closed.size(), 3u);
  EXPECT_EQ(closed[0].path, (std::vector<std::string>{"epoch", "train", "step"}));
  EXPECT_EQ(closed[0].start_ns, 1030u);
  EXPECT_EQ(closed[0].end_ns, 1040u);
  EXPECT_EQ(closed[1].path, (std::vector<std::string>{"epoch"}));
  EXPECT_EQ(closed[1].start_ns, 1010u);
  EXPECT_EQ(closed[1].end_ns, 1050u);
  EXPECT_EQ(closed[2].path, (std::vector<std::string>{"train"}));
  EXPECT_EQ(closed[2].start_ns, 1020u);
  EXPECT_EQ(closed[2].end_ns, 1060u);
  EXPECT_GT(closed[2].thread, 0u);
}

TEST(NvtxRanges, EventAttributesAndWideNamesAreRead) {
  NvtxRanges ranges;
  const auto forward = attributes("forward");
  nvtxRangePushEx_params ex{&forward};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxRangePushEx, call(&ex));
  nvtxRangePushW_params wide{L"b\u00e4ck"};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxRangePushW, call(&wide));
  const nvtxRangeId_t id = 7;
  const auto solve = attributes("solve");
  nvtxRangeStartEx_params start{&solve};
  ranges.on_call(CUPTI_CBID_NVTX_nvtxRangeStartEx, call(&start, &id));
  EXPECT_EQ(ranges.path_now(), (std::vector<std::string>{"forward", "b?ck", "solve"}));
  pop(ranges);
  pop(ranges);
}

TEST(NvtxRanges, ARunawayProgramMeetsBoundsAndPopsStayPaired) {
  NvtxRanges ranges;
  const std::string long_name(5000, 'x');
  for (std::size_t i = 0; i < NvtxRanges::kMaxDepth + 10; ++i) push(ranges, long_name.c_str());
  auto path = ranges.path_now();
  ASSERT_EQ(path.size(), NvtxRanges::kMaxDepth);
  EXPECT_EQ(path.front().size(), NvtxRanges::kMaxNameBytes);
  // The 10 pushes past the bound are popped first: the kept stack shrinks only after them.
  for (int i = 0; i < 10; ++i) pop(ranges);
  EXPECT_EQ(ranges.path_now().size(), NvtxRanges::kMaxDepth);
  pop(ranges);
  EXPECT_EQ(ranges.path_now().size(), NvtxRanges::kMaxDepth - 1);
  for (std::size_t i = 0; i < NvtxRanges::kMaxDepth; ++i) pop(ranges);
  EXPECT_TRUE(ranges.path_now().empty());

  for (nvtxRangeId_t id = 1; id <= NvtxRanges::kMaxStarted + 5; ++id) {
    nvtxRangeStartA_params start{"s"};
    ranges.on_call(CUPTI_CBID_NVTX_nvtxRangeStartA, call(&start, &id));
  }
  EXPECT_EQ(ranges.open_now().started.at("").size(), NvtxRanges::kMaxStarted);
}

}  // namespace
}  // namespace gpulab::inject
