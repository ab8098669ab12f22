// The JSON form of evidence and diagnoses, shared by kernels and timelines.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/diagnosis_model.hpp"
#include "reports/json_reader.hpp"

namespace gpulab::report {

// Non-finite values cannot be represented in JSON; they mean "not measured" and are left out.
nlohmann::json finite_map(const std::map<std::string, double>& values);
nlohmann::json optional_number(const std::optional<double>& v);

nlohmann::json diagnosis_json(const Diagnosis& d);
Diagnosis read_diagnosis(const Reader& r);

}  // namespace gpulab::report
