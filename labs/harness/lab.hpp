// The lab contract (docs/adding-a-lab.md).
//
// A lab is one optimization topic: a baseline kernel and variants that compute the same result.
// It declares itself (LabSpec: parameters, variants and what each variant should teach) and,
// set up for one set of parameter values (LabRun), it launches variants, poisons their outputs
// and checks them against a CPU reference. Timing, counters and reports are the harness's and
// the app's business: a lab knows nothing of JSON, CUPTI or the command line.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "reports/expectation.hpp"
#include "reports/measures.hpp"

namespace gpulab::labs {

using report::Role;

struct ParamSpec {
  std::string name;
  std::string description;
  std::int64_t default_value;
  std::int64_t min;
  std::int64_t max;
  bool set_by_size = false;  // `--size N` sets every parameter marked so
};

using ParamValues = std::map<std::string, std::int64_t>;

struct VariantSpec {
  std::string name;
  Role role;
  std::string description;  // one line
  // The principal diagnosis finding expected (reports/expectation.hpp): usually one id; none
  // when empty; where the card decides, the findings each card may give, and why.
  report::Expectation expected;
};

struct LabSpec {
  std::string name;
  std::string topic;
  std::string summary;         // one line
  std::string teaching_point;  // two to four sentences
  std::vector<ParamSpec> params;
  std::vector<VariantSpec> variants;  // baseline first

  // A traced lab measures whole variants (copies, several streams, graphs, unified memory)
  // rather than single kernels: each variant is launched on the legacy default stream (whose
  // events bracket the work of every blocking stream the lab uses), one more launch is
  // recorded by the activity tracer, and counters are collected only when asked for.
  bool traced = false;
  // Why counters cannot be collected for this lab, when they cannot: kernels that wait for each
  // other (an NCCL collective waits for its peers on the other GPUs) never finish when replayed
  // one at a time. Such a lab is timed and traced only; empty for every other lab.
  std::string no_counters;
  // Launches before and during timing when the command line does not say; variants that take
  // a large part of a second use fewer.
  int default_warmup = 5;
  int default_repeat = 20;
  // A limit across parameters that each parameter's range cannot say (coalescing: size times
  // stride bounds the strided input), checked by resolve_params before any GPU work: throws
  // UsageError naming the values and the limit. Empty when every combination in range is valid.
  std::function<void(const ParamValues&)> check_params;

  const VariantSpec* find_variant(const std::string& name) const;
};

// One kernel launch a variant makes, in launch order: names the counter range it produces and
// lets the harness read the kernel's static attributes (registers, shared memory, occupancy).
struct KernelLaunch {
  std::string name;
  const void* function;  // the __global__ function; nullptr for a library's kernel (cuBLAS,
                         // CUB), whose attributes are then not reported
  dim3 grid;
  dim3 block;
  std::size_t dynamic_shared_bytes = 0;
};

// A lab set up for one set of parameter values: inputs allocated and filled with seeded random
// data, outputs allocated. Methods take a variant name from the lab's spec.
class LabRun {
 public:
  virtual ~LabRun() = default;

  // The fewest bytes the computation must move and the flops it must do.
  virtual report::WorkModel work() const = 0;

  // A variant that computes something else than the lab's main computation (e.g. one that
  // reads every field where the others read one) gives its own model here.
  virtual std::optional<report::WorkModel> variant_work(const std::string& variant) const {
    (void)variant;
    return std::nullopt;
  }

  // Why this variant cannot run here (e.g. too few GPUs); nullopt when it can.
  virtual std::optional<std::string> skip_reason(const std::string& variant) const {
    (void)variant;
    return std::nullopt;
  }

  // What the report must say about how this run was set up, when the lab's numbers would
  // otherwise mislead (e.g. a lab about several GPUs asked to run on one); usually none.
  virtual std::vector<std::string> warnings() const { return {}; }

  // The kernels `launch(variant)` launches, in order.
  virtual std::vector<KernelLaunch> kernels(const std::string& variant) const = 0;

  // Enqueues the variant on `stream`. Must be repeatable: each launch computes the full result.
  virtual void launch(const std::string& variant, cudaStream_t stream) = 0;

  // Traced labs: puts the inputs back in the state every launch of `variant` starts from (e.g.
  // managed data back in host memory, as a program that produces it on the CPU would have it).
  // Called before every launch, outside timing and tracing; returns when the state is in place.
  // (A kernel lab's launches are timed back to back; each recomputes its output anyway.)
  virtual void prepare(const std::string& variant) { (void)variant; }

  // Overwrites every output with a pattern no correct kernel produces (NaN), so that an
  // element the kernel forgot to write fails the check.
  virtual void poison_outputs(cudaStream_t stream) = 0;

  // Compares the outputs of the last completed launch with the CPU reference.
  virtual report::Check check(const std::string& variant) = 0;
};

class Lab {
 public:
  virtual ~Lab() = default;
  virtual const LabSpec& spec() const = 0;
  // Allocates and initializes; throws UsageError when the sizes do not fit the device.
  virtual std::unique_ptr<LabRun> setup(const ParamValues& params, std::uint64_t seed) const = 0;
};

// Throws UsageError: lab `lab` has no variant `name`.
[[noreturn]] void throw_unknown_variant(const char* lab, const std::string& name);

// Parameter values from the defaults, `--size` and `--param NAME=VALUE` overrides; throws
// UsageError naming the parameter and its bounds when a value is unknown or out of range.
ParamValues resolve_params(const LabSpec& spec, std::optional<std::int64_t> size,
                           const std::map<std::string, std::int64_t>& overrides);

// "all" or a comma-separated list of variant names, in the lab's order; throws UsageError
// naming the unknown variant and the known ones.
std::vector<const VariantSpec*> select_variants(const LabSpec& spec, const std::string& selection);

}  // namespace gpulab::labs
