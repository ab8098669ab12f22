#include "reports/render/escape.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace gpulab::report {
namespace {

// The length of the UTF-8 sequence starting at text[i] and its code point; 0 when the bytes
// there are not well-formed UTF-8 (overlong forms, surrogates and truncation included).
std::size_t decode(std::string_view text, std::size_t i, char32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  char32_t min = 0;
  if (lead >= 0xC2 && lead <= 0xDF)
    length = 2, min = 0x80, code_point = lead & 0x1F;
  else if (lead >= 0xE0 && lead <= 0xEF)
    length = 3, min = 0x800, code_point = lead & 0x0F;
  else if (lead >= 0xF0 && lead <= 0xF4)
    length = 4, min = 0x10000, code_point = lead & 0x07;
  else
    return 0;
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i + k) & 0x3F);
  }
  if (code_point < min || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF))
    return 0;
  return length;
}

bool is_control(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (char32_t cp = 0; const std::size_t n = decode(text, i, cp)) {
      if (is_control(cp))
        out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp));
      else
        out.append(text.substr(i, n));
      i += n;
    } else {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    }
  }
  return out;
}

std::string html_safe(std::string_view text) {
  std::string out;
  for (const char c : terminal_safe(text)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string markdown_safe(std::string_view text) {
  std::string out;
  for (const char c : terminal_safe(text)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\\':
      case '`':
      case '*':
      case '_':
      case '~':
      case '[':
      case ']':
      case '#':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string shown(std::string_view text, const Style& style) {
  return style.table == TableStyle::markdown ? markdown_safe(text) : terminal_safe(text);
}

std::string markdown_code_block(std::string_view text) {
  std::size_t longest = 0;
  for (std::size_t i = 0, run = 0; i < text.size(); ++i) {
    run = text[i] == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string out = fence + "\n" + std::string(text);
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out + fence + "\n";
}

}  // namespace gpulab::report
