// The report model's types (reports/report.hpp), declared only: for headers that name them by
// reference, by pointer or as a return type, so that what includes such a header is not rebuilt
// when the model changes. The parts of the model that change seldom (the device, what the
// harness measures, diagnoses, timelines) have headers of their own.
#pragma once

namespace gpulab::report {

struct Report;
struct Variant;
struct Kernel;
struct ProgramInfo;

}  // namespace gpulab::report
