#include "reports/render/html_page.hpp"

#include <fmt/format.h>

#include "reports/render/escape.hpp"

namespace gpulab::report {
namespace {

// System fonts only: the page must render the same with no network.
constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1f24;
       max-width: 1100px; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { border-bottom: 2px solid #d0d7de;
     padding-bottom: .2em; margin-top: 2em; } h3 { margin-top: 1.4em; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
              font-size: .92em; }
table { border-collapse: collapse; margin: .6em 0; } th, td { padding: .25em .7em;
        border-bottom: 1px solid #e3e7eb; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: .1em 1em; }
dl.meta dt { color: #57606a; } dl.meta dd { margin: 0; }
.passed { color: #1a7f37; } .failed { color: #cf222e; } .skipped { color: #9a6700; }
.high { color: #cf222e; } .medium { color: #9a6700; } .low { color: #57606a; }
details { margin: .6em 0; border: 1px solid #d0d7de; border-radius: 6px; padding: .4em .8em; }
summary { cursor: pointer; font-weight: 600; }
ol.path { list-style: none; padding-left: 0; } ol.path li { margin: .3em 0; }
ol.path .answer { font-weight: 600; } ol.path .evidence { color: #57606a; }
svg { max-width: 100%; height: auto; } svg text { font: 11px system-ui, sans-serif; fill: #1b1f24; }
svg .axis { stroke: #57606a; stroke-width: 1; } svg .grid { stroke: #e3e7eb; stroke-width: 1; }
svg .bar { fill: #0969da; } svg .bar.baseline { fill: #8c959f; } svg .bar.reference { fill: #8250df; }
svg .roof { stroke: #cf222e; stroke-width: 2; fill: none; }
svg .roof.compute { stroke: #1a7f37; } svg .point { fill: #0969da; stroke: #fff; }
svg .point.model { fill: #fff; stroke: #0969da; stroke-width: 2; }
svg .kernel { fill: #0969da; } svg .copy { fill: #bf8700; } svg .memset { fill: #8c959f; }
figure.source pre { background: #f6f8fa; padding: .6em; overflow-x: auto; font-size: 12px; }
figure.source .hot { background: #ffebe9; font-weight: 600; }
svg .migration { fill: #cf222e; } svg .nvtx { fill: #2da44e; fill-opacity: 0.35; stroke: #1a7f37; } svg .communication { fill: #8250df; } svg .small { font-size: 10px; fill: #57606a; }
svg .series { fill: none; stroke-width: 2; } svg .change { stroke: #9a6700; stroke-dasharray: 4 3; }
svg .s0 { stroke: #8c959f; fill: #8c959f; } svg .s1 { stroke: #0969da; fill: #0969da; }
svg .s2 { stroke: #1a7f37; fill: #1a7f37; } svg .s3 { stroke: #bf8700; fill: #bf8700; }
svg .s4 { stroke: #8250df; fill: #8250df; } svg .s5 { stroke: #cf222e; fill: #cf222e; }
svg .s6 { stroke: #1b7c83; fill: #1b7c83; } svg .s7 { stroke: #57606a; fill: #57606a; }
svg .series.s0, svg .series.s1, svg .series.s2, svg .series.s3, svg .series.s4, svg .series.s5,
svg .series.s6, svg .series.s7 { fill: none; }
@media print { details { break-inside: avoid; } details:not([open]) > *:not(summary) { display: block; } }
)";

}  // namespace

std::string page_head(const std::string& title, const std::string& generator,
                      const std::vector<std::string>& argv) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", html_safe(title),
                     kStyle);
  out += fmt::format("<header>\n<h1>{}</h1>\n<dl class=\"meta\">\n", html_safe(title));
  if (!generator.empty()) out += fmt::format("<dt>made by</dt><dd>{}</dd>\n", html_safe(generator));
  if (!argv.empty()) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    out += fmt::format("<dt>command</dt><dd><code>{}</code></dd>\n", html_safe(cmd));
  }
  return out;
}

std::string page_tail() { return "</body>\n</html>\n"; }

}  // namespace gpulab::report
