#include "reports/html_text.hpp"

#include <fmt/format.h>

namespace gpulab::report {

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
          out += fmt::format("\\x{:02x}", c);
        } else if (c == 0xC2 && i + 1 < text.size() &&
                   static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
          // C1 controls, U+0080..U+009F, are two bytes in UTF-8.
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[++i]));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

}  // namespace gpulab::report
