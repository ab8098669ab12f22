// The whole command line as one CLI11 app: the option structs a parse fills in, and the
// subcommand each belongs to. Built afresh for every command line (the shell's too), so that
// no option keeps a value from an earlier command.
#pragma once

#include <CLI/CLI.hpp>

#include "app/commands.hpp"

namespace gpulab::app {

struct CommandLine {
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  CLI::App app;
  ListOptions list;
  InfoOptions info;
  RunOptions run;
  SweepOptions sweep;
  CompareOptions compare;
  DiagnoseOptions diagnose;
  SelftestOptions selftest;
  CompleteOptions complete;
  ReportOptions report;
  ExportOptions export_options;
  SourceOptions source;
  ProfileOptions profile;
  CLI::App* list_cmd;
  CLI::App* info_cmd;
  CLI::App* run_cmd;
  CLI::App* sweep_cmd;
  CLI::App* compare_cmd;
  CLI::App* diagnose_cmd;
  CLI::App* selftest_cmd;
  CLI::App* shell_cmd;
  CLI::App* complete_cmd;
  CLI::App* report_cmd;
  CLI::App* export_cmd;
  CLI::App* source_cmd;
  CLI::App* profile_cmd;
  CLI::App* man_cmd;
};

}  // namespace gpulab::app
