// Kernel names: demangling, the display form text output uses, and the base name ncu filters by.
#include <gtest/gtest.h>

#include "reports/kernel_name.hpp"

namespace gpulab::report {
namespace {

// Mangled names as the H200 build's runtime returned them (tests/fixtures/labs/*.json).
constexpr const char* kTiled =
    "_ZN6gpulab4labs49_GLOBAL__N__aa68c1c1_12_transpose_cu_62d2478c_96616transpose_sharedINS1_"
    "10PaddedTileEEEvPKfPfii";
constexpr const char* kPlain =
    "_ZN6gpulab4labs49_GLOBAL__N__2698a926_12_reduction_cu_62d2478c_95313reduce_finishEPKfPfi";

TEST(KernelName, DemanglesTheToolchainsNames) {
  EXPECT_EQ(demangle(kTiled),
            "void gpulab::labs::(anonymous namespace)::transpose_shared<gpulab::labs::(anonymous "
            "namespace)::PaddedTile>(float const*, float*, int, int)");
  EXPECT_EQ(demangle(kPlain),
            "gpulab::labs::(anonymous namespace)::reduce_finish(float const*, float*, int)");
  // An extern "C" kernel or a name that is not mangled stays as it is.
  EXPECT_EQ(demangle("sm80_xmma_gemm_f32f32"), "sm80_xmma_gemm_f32f32");
  EXPECT_EQ(demangle(""), "");
}

TEST(KernelName, DisplayNameDropsReturnTypeParametersAndOwnNamespaces) {
  EXPECT_EQ(display_name(demangle(kTiled)), "transpose_shared<PaddedTile>");
  EXPECT_EQ(display_name(demangle(kPlain)), "reduce_finish");
  // Other namespaces are the reader's landmarks and stay.
  EXPECT_EQ(display_name("void cub::detail::DeviceReduceKernel<cub::Policy, float*>(float*, int)"),
            "cub::detail::DeviceReduceKernel<cub::Policy, float*>");
  EXPECT_EQ(display_name("scale<float>(float*, int)"), "scale<float>");
}

TEST(KernelName, BaseNameIsWhatNcuFiltersBy) {
  EXPECT_EQ(base_name(demangle(kTiled)), "transpose_shared");
  EXPECT_EQ(base_name(demangle(kPlain)), "reduce_finish");
  EXPECT_EQ(base_name("void cub::detail::DeviceReduceKernel<cub::Policy<(int)1>, float*>(float*)"),
            "DeviceReduceKernel");
  EXPECT_EQ(base_name("sm80_xmma_gemm_f32f32"), "sm80_xmma_gemm_f32f32");
}

TEST(KernelName, ShownFunctionIsCutWithAnEllipsisInTheMiddle) {
  EXPECT_EQ(shown_function(demangle(kTiled)), "transpose_shared<PaddedTile>");
  const std::string cut = shown_function("void f<" + std::string(100, 'a') + ">(int)", 20);
  EXPECT_EQ(cut, "f<aaaaa\u2026" + std::string(11, 'a') + ">");
  // The function's own name stays whole when it is short enough.
  EXPECT_EQ(shortened("cub::DeviceReduceKernel<" + std::string(100, 'x') + ">", 56),
            "cub::DeviceReduceKernel<\u2026" + std::string(30, 'x') + ">");
}

// Two 200-character instantiations that share their first 150 characters stay different.
TEST(KernelName, LongNamesThatShareAHeadStayDistinguishable) {
  const std::string head = "cutlass::Kernel<cutlass::gemm::GemmUniversal<" + std::string(105, 'p');
  const std::string a = head + std::string(49, 'a') + ">", b = head + std::string(49, 'b') + ">";
  ASSERT_EQ(a.size(), 200u);
  for (const std::size_t width : {24, 40, 56, 80})
    EXPECT_NE(shortened(a, width), shortened(b, width)) << width;
}

}  // namespace
}  // namespace gpulab::report
