// Lab `cuda-graphs`: a sequence of many short kernels, launched one by one or as one graph.
//
// The computation: `steps` (200 by default) passes over `size` floats (32768 by default). Step 0
// reads x and writes y[i] = a_0 x[i] + b_0; step k > 0 updates y in place, y[i] = a_k y[i] + b_k,
// each with one fused multiply-add and its own small constants. Each step depends on the one
// before, so the kernels run one at a time, as the layers of a small model or the stages of an
// iterative solver would.
//
// Napkin math (the H200):
//  - One step: 32768 floats, 128 KiB read and 128 KiB written, from L2 after the first step
//    (60 MB of L2 holds all of it). 128 blocks of 256 threads, fewer than the 132 SMs: one
//    partial wave in which each thread does one load, one FMA and one store. The kernel lasts
//    ~2-3 us on the GPU, most of it the launch itself: block dispatch, one L2 round trip, drain.
//  - One launch costs the host a few microseconds (cudaLaunchKernel: argument packing, the
//    driver's checks, writing the command into the stream's queue), about as long as the kernel
//    runs. With launches one by one, the GPU finishes a kernel and then waits for the next one
//    to arrive, or at best for the front end to fetch and set it up: a gap of a microsecond or
//    more between kernels, and time grows as steps x (launch cost or kernel + gap).
//  - A graph is built and uploaded once; a launch submits all its kernels in one call, and the
//    GPU walks the dependencies itself, with shorter gaps. Expect the graph to take ~60-80% of
//    the launches' time at 200 steps, its kernels unchanged and the idle time between them cut.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "labs/harness/check.hpp"
#include "labs/harness/cuda_check.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/harness.hpp"
#include "labs/harness/parallel_for.hpp"
#include "labs/harness/random.hpp"
#include "labs/harness/registry.hpp"
#include "labs/harness/table_lab.hpp"

namespace gpulab::labs {
namespace {

constexpr int kBlock = 256;

// The constants of step k: a_k in [0.9984, 0.999], b_k in [-0.005, 0.005], both computed in
// float once on the host and passed to the kernel, so the reference uses the very same values.
// Since |a_k| < 1, y stays within |x| + 0.005 / (1 - 0.999) ~ 6: bounded for any number of
// steps.
float step_scale(int k) {
  return 0.999f - 0.0001f * static_cast<float>(k % 7);
}
float step_offset(int k) {
  return 0.001f * static_cast<float>((k * 5) % 11) - 0.005f;
}

__host__ __device__ inline float apply_step(float v, float a, float b) {
  return fmaf(v, a, b);  // one rounding on both sides: the reference matches exactly
}

// ---- the kernel ---------------------------------------------------------------------------------
// One element per thread, 256-thread blocks. `src` is x for step 0 and y itself afterwards, so
// the pointers may alias: no __restrict__. Each thread reads and writes only its own element,
// so the in-place update is safe within a kernel, and the stream (or the graph's edges) orders
// the kernels. Per element and step: 4 bytes read, 4 written, one FMA: nothing for the SMs or
// DRAM to do; the time is the launch's.
__global__ void step(const float* src, float* y, std::size_t n, float a, float b) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = apply_step(src[i], a, b);
}

// ---- owners of what only this lab uses ----------------------------------------------------------

class Graph {
 public:
  Graph() = default;
  ~Graph() {
    if (graph_) GPULAB_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph_));
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  cudaGraph_t get() const { return graph_; }
  void reset(cudaGraph_t graph) {
    if (graph_) GPULAB_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph_));
    graph_ = graph;
  }

 private:
  cudaGraph_t graph_ = nullptr;
};

class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec() {
    if (exec_) GPULAB_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec_));
  }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  cudaGraphExec_t get() const { return exec_; }
  // Instantiates `graph` (no flags: launched from the host, no auto-free of allocations).
  void instantiate(cudaGraph_t graph) {
    if (exec_) GPULAB_CUDA_CHECK(cudaGraphExecDestroy(exec_));
    exec_ = nullptr;
    GPULAB_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph, 0));
  }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

// ---- the variants -------------------------------------------------------------------------------

enum class Submission { launches, graph };

struct CudaGraphsVariant {
  VariantSpec spec;
  Submission submission;
};
using Variants = VariantTable<CudaGraphsVariant>;

std::vector<CudaGraphsVariant> variant_table() {
  return {
      {{"stream-launches", Role::baseline,
        "one <<<>>> launch per step on the stream: the host pays for every launch and the GPU "
        "idles between kernels",
        "launch-overhead"},
       Submission::launches},
      {{"graph", Role::optimized,
        "the same launches captured once into a graph (instantiated and uploaded at setup), "
        "then one cudaGraphLaunch per run",
        ""},
       Submission::graph},
  };
}

class CudaGraphsRun final : public LabRun {
 public:
  CudaGraphsRun(const Variants& variants, std::size_t n, int steps, std::uint64_t seed)
      : variants_(variants), n_(n), host_x_(n) {
    require_device_memory(2 * n_ * sizeof(float), "cuda-graphs at this size");
    fill_uniform(host_x_, seed);
    for (int k = 0; k < steps; ++k) {
      scales_.push_back(step_scale(k));
      offsets_.push_back(step_offset(k));
    }
    x_ = DeviceBuffer<float>(n_);
    y_ = DeviceBuffer<float>(n_);
    GPULAB_CUDA_CHECK(cudaMemcpy(x_.get(), host_x_.data(), x_.bytes(), cudaMemcpyHostToDevice));
    build_graph();
  }

  // Every step reads and writes y (step 0 reads x): 8 bytes and one FMA per element and step.
  // Between steps the data stays in L2, so this is the traffic of the kernels, not of DRAM.
  report::WorkModel work() const override {
    const double touched = static_cast<double>(scales_.size()) * static_cast<double>(n_);
    return {4.0 * touched, 4.0 * touched, 2.0 * touched};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    (void)variants_[variant];
    return std::vector<KernelLaunch>(
        scales_.size(), {"step", reinterpret_cast<const void*>(step), grid(), dim3(kBlock), 0});
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    switch (variants_[variant].submission) {
      case Submission::launches:
        enqueue_steps(stream);
        break;
      case Submission::graph:
        GPULAB_CUDA_CHECK(cudaGraphLaunch(exec_.get(), stream));
        break;
    }
  }

  void poison_outputs(cudaStream_t stream) override { poison(y_.get(), y_.bytes(), stream); }

  report::Check check(const std::string& variant) override {
    (void)variants_[variant];
    return check_result(y_.get(), reference(), Tolerance{0, 0});
  }

 private:
  const Variants& variants_;

  dim3 grid() const { return dim3(static_cast<unsigned>((n_ + kBlock - 1) / kBlock)); }

  // The steps' kernels, in order, on `stream`: the baseline's launch, and what the graph
  // captures.
  void enqueue_steps(cudaStream_t stream) {
    for (std::size_t k = 0; k < scales_.size(); ++k) {
      step<<<grid(), kBlock, 0, stream>>>(k == 0 ? x_.get() : y_.get(), y_.get(), n_, scales_[k],
                                          offsets_[k]);
      GPULAB_CUDA_CHECK_LAUNCH();
    }
  }

  // Stream capture records the launches into a graph instead of running them. It is done on a
  // private non-blocking stream, so that the capture never meets the legacy default stream
  // (a blocking stream under capture would be joined to it, which capture forbids), in
  // thread-local mode, so that other threads' CUDA calls are not affected. Instantiation
  // checks and lowers the graph once; the upload puts it on the device ahead of the first
  // launch, so that no launch pays for it.
  void build_graph() {
    CudaStream capture;
    GPULAB_CUDA_CHECK(cudaStreamBeginCapture(capture.get(), cudaStreamCaptureModeThreadLocal));
    try {
      enqueue_steps(capture.get());
    } catch (...) {
      // End the capture before the stream goes, and drop what it recorded.
      cudaGraph_t partial = nullptr;
      GPULAB_CUDA_CHECK_NOEXCEPT(cudaStreamEndCapture(capture.get(), &partial));
      if (partial) GPULAB_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(partial));
      throw;
    }
    cudaGraph_t captured = nullptr;
    GPULAB_CUDA_CHECK(cudaStreamEndCapture(capture.get(), &captured));
    graph_.reset(captured);
    exec_.instantiate(graph_.get());
    GPULAB_CUDA_CHECK(cudaGraphUpload(exec_.get(), capture.get()));
    capture.synchronize();
  }

  // Computed on the first check: every step's FMA in the same order, per element.
  const std::vector<float>& reference() {
    if (reference_.empty()) {
      reference_.resize(n_);
      parallel_for(n_, [this](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          float v = host_x_[i];
          for (std::size_t k = 0; k < scales_.size(); ++k)
            v = apply_step(v, scales_[k], offsets_[k]);
          reference_[i] = v;
        }
      });
    }
    return reference_;
  }

  std::size_t n_;
  std::vector<float> host_x_;
  std::vector<float> scales_, offsets_;  // a_k, b_k
  DeviceBuffer<float> x_, y_;
  Graph graph_;
  GraphExec exec_;
  std::vector<float> reference_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<CudaGraphsRun>(variants, static_cast<std::size_t>(params.at("size")),
                                         static_cast<int>(params.at("steps")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "cuda-graphs";
  spec.topic = "launch overhead: many short kernels, CUDA graphs";
  spec.summary = "200 dependent kernels of ~2 us each: launched one by one vs one CUDA graph";
  spec.teaching_point =
      "Every kernel launch costs the host a few microseconds and leaves the GPU a gap between "
      "one kernel and the next. When a kernel runs about as long as a launch costs, those "
      "gaps, not the kernels, set the time, and no kernel optimization helps. A CUDA graph "
      "captures the whole sequence once and submits it in one call, so the GPU runs the "
      "kernels back to back with much shorter gaps.";
  spec.params = {
      {"size", "floats each step updates (one thread each)", 32768, 1, 1 << 24, true},
      {"steps", "dependent kernels per run", 200, 1, 10000, false},
  };
  spec.traced = true;
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
