// One options struct and two functions per command: add_* declares the subcommand and its
// options on the CLI11 app (parse), run_* validates and runs it (validate, run), returning the
// exit code. Commands stay thin: the work lives in Session, labs/ and reports/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli.hpp"
#include "app/lab_runner.hpp"

namespace gpulab::app {

struct ListOptions {
  bool json = false;
  bool metrics = false;  // list the metric catalogue instead of the labs
};
CLI::App* add_list(CLI::App& root, ListOptions& options);
int run_list(const ListOptions& options, Io& io);

struct InfoOptions {
  bool json = false;
  std::string check_metrics;  // a metric set or list to check for support on this device
};
CLI::App* add_info(CLI::App& root, InfoOptions& options);
int run_info(const InfoOptions& options, Session& session, Io& io);

struct RunOptions {
  std::string lab;
  RunSettings settings;
  std::vector<std::string> params;  // NAME=VALUE
  std::string json_path;
  std::string format = "text";
};
CLI::App* add_run(CLI::App& root, RunOptions& options);
int run_run(RunOptions& options, Session& session, Io& io, const std::vector<std::string>& argv);

struct CompareOptions {
  std::vector<std::string> files;
  std::string variants;  // "A,B": two variants of one report
  std::string format = "text";
  std::optional<double> fail_on_regression;  // percent
  std::string metrics;
};
CLI::App* add_compare(CLI::App& root, CompareOptions& options);
int run_compare(const CompareOptions& options, Io& io);

}  // namespace gpulab::app
